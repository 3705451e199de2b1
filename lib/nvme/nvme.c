/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every layer of the driver shares: transports by name, controller options, transport
 * ID strings, and the names of NVMe status codes. Connect, probe and detach, which use
 * the whole driver, sit on top of it in nvme_connect.c.
 *
 * A transport ID names a controller the transport of its trtype reaches: a PCI function
 * ("trtype:PCIe traddr:0000:01:00.0"), a virtual device an env provider registered under
 * the trtype makes on demand ("trtype:emu name:emu0 nn:2", also driven by the PCIe
 * transport), or a TCP target. A probe without an address runs the PCIe transport's scan.
 * Which function or device stands behind a transport ID is the transport's business
 * (nvme_pcie_probe.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvme_internal.h"
#include "nvpoll/nvme_tcp_spec.h"

/* ---------------------------------------------------------------------------------------
 * Transports
 * ------------------------------------------------------------------------------------- */

#define NVME_MAX_TRANSPORTS 8

/* Filled by nvme_transport_register(): PCIe registers itself when the library loads. */
static const struct nvme_transport_ops *g_transports[NVME_MAX_TRANSPORTS];
static pthread_mutex_t g_transport_lock = PTHREAD_MUTEX_INITIALIZER;

int
nvme_transport_register(const struct nvme_transport_ops *ops)
{
	int rc = -ENOSPC;
	size_t i;

	pthread_mutex_lock(&g_transport_lock);
	for (i = 0; i < NVME_MAX_TRANSPORTS; i++) {
		if (g_transports[i] != NULL && strcasecmp(g_transports[i]->name, ops->name) == 0) {
			rc = -EEXIST;
			break;
		}
		if (g_transports[i] == NULL) {
			g_transports[i] = ops;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&g_transport_lock);
	return rc;
}

const struct nvme_transport_ops *
nvme_transport_get(const char *name)
{
	const struct nvme_transport_ops *ops = NULL;
	size_t i;

	pthread_mutex_lock(&g_transport_lock);
	for (i = 0; i < NVME_MAX_TRANSPORTS && g_transports[i] != NULL; i++) {
		if (strcasecmp(g_transports[i]->name, name) == 0) {
			ops = g_transports[i];
			break;
		}
	}
	pthread_mutex_unlock(&g_transport_lock);
	return ops;
}

/* ---------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------- */

void
nvp_nvme_ctrlr_opts_init(struct nvp_nvme_ctrlr_opts *opts, size_t opts_size)
{
	struct nvp_nvme_ctrlr_opts d;

	if (opts == NULL) {
		return;
	}
	memset(&d, 0, sizeof(d));
	d.opts_size = NVP_MIN(opts_size, sizeof(d));
	d.num_io_queues = NVME_DEFAULT_NUM_IO_QUEUES;
	d.io_queue_size = NVME_DEFAULT_IO_QUEUE_SIZE;
	d.io_queue_requests = 4 * NVME_DEFAULT_IO_QUEUE_SIZE;
	d.admin_queue_size = NVME_DEFAULT_ADMIN_QUEUE_SIZE;
	d.admin_timeout_ms = NVME_DEFAULT_ADMIN_TIMEOUT_MS;
	d.io_timeout_us = NVME_DEFAULT_IO_TIMEOUT_US;
	d.max_io_size = NVME_DEFAULT_MAX_IO_SIZE;
	d.io_retry_count = NVME_DEFAULT_IO_RETRY_COUNT;
	d.no_shn_notification = false;
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

/* Defaults, overlaid with the fields the caller's opts_size says it knows. */
void
nvme_ctrlr_opts_copy(struct nvp_nvme_ctrlr_opts *dst, const struct nvp_nvme_ctrlr_opts *src)
{
	nvp_nvme_ctrlr_opts_init(dst, sizeof(*dst));
	if (src != NULL && src != dst) {
		memcpy(dst, src, NVP_MIN(src->opts_size, sizeof(*dst)));
	}
	dst->opts_size = sizeof(*dst);
}

/*
 * SPDK's rules: -1 (forever) or more; with a loss timeout a delay of 1 or more, not past
 * it; fast_io_fail 0 or between the delay and the loss timeout; nothing but zeros when
 * reconnect is off. \return NULL if valid, else what is wrong (for the caller's message).
 */
static const char *
reconnect_opts_check(int32_t loss, uint32_t delay, uint32_t fast)
{
	if (loss < -1) {
		return "ctrlr_loss_timeout_sec must be -1 (forever), 0 (no reconnect) or a "
		       "number of seconds";
	}
	if (loss == 0) {
		return delay != 0 || fast != 0 ? "reconnect_delay_sec and fast_io_fail_timeout_sec "
						 "must be 0 when ctrlr_loss_timeout_sec is 0" :
						 NULL;
	}
	if (delay == 0) {
		return "reconnect_delay_sec must be at least 1 when ctrlr_loss_timeout_sec is set";
	}
	if (loss > 0 && delay > (uint32_t)loss) {
		return "reconnect_delay_sec must not exceed ctrlr_loss_timeout_sec";
	}
	if (fast != 0 && fast < delay) {
		return "fast_io_fail_timeout_sec must be 0 or at least reconnect_delay_sec";
	}
	if (fast != 0 && loss > 0 && fast > (uint32_t)loss) {
		return "fast_io_fail_timeout_sec must not exceed ctrlr_loss_timeout_sec";
	}
	return NULL;
}

/* The options a connect accepts; says which is out of range. \return 0 or -EINVAL. */
int
nvme_ctrlr_opts_check(const struct nvp_nvme_ctrlr_opts *o)
{
	const char *what = NULL;

	if (o->admin_queue_size < NVME_MIN_QUEUE_ENTRIES ||
	    o->admin_queue_size > NVME_MAX_ADMIN_ENTRIES) {
		what = "admin_queue_size must be 2..4096";
	} else if (nvme_queue_size_fit(o->io_queue_size, NVME_MAX_QUEUE_ENTRIES, NULL) != 0) {
		what = "io_queue_size must be 2..65536";
	} else if (o->num_io_queues == 0 || o->num_io_queues > 65535) {
		what = "num_io_queues must be 1..65535";
	} else if (o->admin_timeout_ms == 0) {
		what = "admin_timeout_ms must not be 0";
	} else if (o->max_io_size < 4096) {
		what = "max_io_size must be at least 4096";
	} else {
		what = reconnect_opts_check(o->ctrlr_loss_timeout_sec, o->reconnect_delay_sec,
					    o->fast_io_fail_timeout_sec);
	}
	if (what != NULL) {
		NVP_ERRLOG("controller options: %s", what);
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Transport IDs
 * ------------------------------------------------------------------------------------- */

static int
trid_copy_value(char *dst, size_t len, const char *key, const char *value)
{
	if (value[0] == '\0') {
		NVP_ERRLOG("transport ID: '%s' has an empty value", key);
		return -EINVAL;
	}
	if (nvp_strlcpy(dst, value, len) >= len) {
		NVP_ERRLOG("transport ID: value of '%s' is longer than %zu characters", key,
			   len - 1);
		return -EINVAL;
	}
	return 0;
}

/* Keep an unknown pair for the virtual device provider, as "key=value". */
static int
trid_append_arg(struct nvp_nvme_transport_id *trid, const char *key, const char *value)
{
	size_t used = strlen(trid->args);
	int n = snprintf(trid->args + used, sizeof(trid->args) - used, "%s%s=%s", used ? " " : "",
			 key, value);

	if (n < 0 || (size_t)n >= sizeof(trid->args) - used) {
		trid->args[used] = '\0';
		NVP_ERRLOG("transport ID: options longer than %d characters",
			   NVP_NVME_TRARGS_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

static int
trid_set_pair(struct nvp_nvme_transport_id *trid, const char *key, const char *value)
{
	uint64_t v;

	if (strcasecmp(key, "trtype") == 0) {
		return trid_copy_value(trid->trstring, sizeof(trid->trstring), key, value);
	}
	if (strcasecmp(key, "traddr") == 0) {
		return trid_copy_value(trid->traddr, sizeof(trid->traddr), key, value);
	}
	if (strcasecmp(key, "name") == 0) {
		return trid_copy_value(trid->name, sizeof(trid->name), key, value);
	}
	if (strcasecmp(key, "subnqn") == 0) {
		return trid_copy_value(trid->subnqn, sizeof(trid->subnqn), key, value);
	}
	if (strcasecmp(key, "ns") == 0) {
		if (nvp_strtou64(value, 1, UINT32_MAX - 1, &v) != 0) {
			NVP_ERRLOG("transport ID: ns '%s' is not a namespace id (1..%u)", value,
				   UINT32_MAX - 1);
			return -EINVAL;
		}
		trid->nsid = (uint32_t)v;
		return 0;
	}
	return trid_append_arg(trid, key, value);
}

static int
trid_pair(void *ctx, const char *key, const char *value)
{
	return trid_set_pair(ctx, key, value);
}

static int
trid_malformed(void *ctx, const char *pair)
{
	(void)ctx;
	NVP_ERRLOG("transport ID: malformed pair '%s': expected key:value or key=value", pair);
	return -EINVAL;
}

/* trtype: PCIe, TCP, or the name of a registered virtual device provider. */
int
nvme_trid_resolve_type(struct nvp_nvme_transport_id *trid)
{
	if (trid->trstring[0] == '\0') {
		NVP_ERRLOG(
			"transport ID: trtype missing (e.g. \"trtype:PCIe traddr:0000:01:00.0\")");
		return -EINVAL;
	}
	if (strcasecmp(trid->trstring, "PCIe") == 0) {
		trid->trtype = NVP_NVME_TRANSPORT_PCIE;
	} else if (strcasecmp(trid->trstring, "TCP") == 0) {
		trid->trtype = NVP_NVME_TRANSPORT_TCP;
	} else if (nvp_env_vdev_provider_find(trid->trstring) != NULL) {
		trid->trtype = NVP_NVME_TRANSPORT_VDEV;
	} else {
		NVP_ERRLOG("unknown transport type '%s' (known: PCIe, TCP, and the virtual device "
			   "providers registered with env; none is named '%s' - is the library "
			   "that provides it linked in?)",
			   trid->trstring, trid->trstring);
		return -EINVAL;
	}
	return 0;
}

static const char *
trid_type_string(const struct nvp_nvme_transport_id *trid)
{
	if (trid->trstring[0] != '\0') {
		return trid->trstring;
	}
	return trid->trtype == NVP_NVME_TRANSPORT_TCP ? "TCP" : "PCIe";
}

/* The transport that drives @trid: PCIe for a PCI function, real or made by a provider. */
const struct nvme_transport_ops *
nvme_transport_for(const struct nvp_nvme_transport_id *trid)
{
	switch (trid->trtype) {
	case NVP_NVME_TRANSPORT_PCIE:
	case NVP_NVME_TRANSPORT_VDEV:
		return nvme_transport_get("PCIe");
	default:
		return nvme_transport_get(trid_type_string(trid));
	}
}

int
nvp_nvme_transport_id_parse(struct nvp_nvme_transport_id *trid, const char *str)
{
	static const struct nvp_kv_syntax syn = {
		.seps = " \t", .assign = ":=", .need_assign = true, .malformed = trid_malformed
	};
	const struct nvme_transport_ops *transport;
	int rc;

	if (trid == NULL || str == NULL) {
		return -EINVAL;
	}
	memset(trid, 0, sizeof(*trid));
	/* Pairs split at the first ':' or '=' of each, between blanks; every value's length
	 * is checked where it is stored. */
	rc = nvp_kv_parse_ext(str, &syn, trid_pair, trid);
	if (rc != 0) {
		return rc;
	}
	rc = nvme_trid_resolve_type(trid);
	if (rc != 0) {
		return rc;
	}
	/* What only the transport knows (PCIe: traddr is a PCI address). */
	transport = nvme_transport_for(trid);
	if (transport != NULL && transport->trid_check != NULL) {
		return transport->trid_check(trid);
	}
	return 0;
}

/* A lookup of one key among a transport ID's other pairs. */
struct trid_arg_find {
	const char *key;
	char *value;
	size_t len;
	int rc; /* -ENOENT until found */
};

static int
trid_arg_pair(void *ctx, const char *key, const char *value)
{
	struct trid_arg_find *f = ctx;

	if (strcasecmp(key, f->key) != 0) {
		return 0;
	}
	if (f->rc != -ENOENT) {
		NVP_ERRLOG("transport ID: '%s' is given twice: give it once", f->key);
		return -EINVAL;
	}
	if (value[0] == '\0') {
		NVP_ERRLOG("transport ID: '%s' has an empty value", f->key);
		return -EINVAL;
	}
	if (nvp_strlcpy(f->value, value, f->len) >= f->len) {
		NVP_ERRLOG("transport ID: value of '%s' is longer than %zu characters", f->key,
			   f->len - 1);
		f->rc = -ENOSPC;
		return 0; /* a second one is still reported as such */
	}
	f->rc = 0;
	return 0;
}

static int
trid_arg_malformed(void *ctx, const char *pair)
{
	(void)ctx;
	NVP_ERRLOG("transport ID: malformed pair '%s' among the options: expected key=value", pair);
	return -EINVAL;
}

int
nvp_nvme_transport_id_get_arg(const struct nvp_nvme_transport_id *trid, const char *key,
			      char *value, size_t len)
{
	static const struct nvp_kv_syntax syn = {
		.seps = " ", .assign = "=", .need_assign = true, .malformed = trid_arg_malformed
	};
	struct trid_arg_find f = { key, value, len, -ENOENT };
	int rc;

	if (trid == NULL || key == NULL || key[0] == '\0' || value == NULL || len == 0) {
		return -EINVAL;
	}
	/* Bounded: args may have been filled in by hand. */
	if (strnlen(trid->args, sizeof(trid->args)) == sizeof(trid->args)) {
		NVP_ERRLOG("transport ID: options not NUL-terminated");
		return -EINVAL;
	}
	rc = nvp_kv_parse_ext(trid->args, &syn, trid_arg_pair, &f);
	if (rc != 0) {
		return rc;
	}
	if (f.rc != 0) {
		value[0] = '\0';
	}
	return f.rc;
}

int
nvp_nvme_transport_id_fmt(char *buf, size_t len, const struct nvp_nvme_transport_id *trid)
{
	char ns[24] = "";
	int n;

	if (buf == NULL || trid == NULL) {
		return -EINVAL;
	}
	if (trid->nsid != 0) {
		snprintf(ns, sizeof(ns), " ns:%u", trid->nsid);
	}
	n = snprintf(buf, len, "trtype:%s%s%s%s%s%s%s%s%s%s", trid_type_string(trid),
		     trid->traddr[0] ? " traddr:" : "", trid->traddr, trid->name[0] ? " name:" : "",
		     trid->name, ns, trid->subnqn[0] ? " subnqn:" : "", trid->subnqn,
		     trid->args[0] ? " " : "", trid->args);
	if (n < 0 || (size_t)n >= len) {
		return -ENOSPC;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Status strings (NVMe 1.4 section 4.6.1.2)
 * ------------------------------------------------------------------------------------- */

struct status_name {
	uint8_t sc;
	const char *name;
};

static const struct status_name g_generic_status[] = {
	{ NVME_SC_SUCCESS, "Successful Completion" },
	{ NVME_SC_INVALID_OPCODE, "Invalid Command Opcode" },
	{ NVME_SC_INVALID_FIELD, "Invalid Field in Command" },
	{ NVME_SC_COMMAND_ID_CONFLICT, "Command ID Conflict" },
	{ NVME_SC_DATA_TRANSFER_ERROR, "Data Transfer Error" },
	{ NVME_SC_ABORTED_POWER_LOSS, "Commands Aborted due to Power Loss Notification" },
	{ NVME_SC_INTERNAL_DEVICE_ERROR, "Internal Error" },
	{ NVME_SC_ABORTED_BY_REQUEST, "Command Abort Requested" },
	{ NVME_SC_ABORTED_SQ_DELETION, "Command Aborted due to SQ Deletion" },
	{ NVME_SC_ABORTED_FAILED_FUSED, "Command Aborted due to Failed Fused Command" },
	{ NVME_SC_ABORTED_MISSING_FUSED, "Command Aborted due to Missing Fused Command" },
	{ NVME_SC_INVALID_NAMESPACE_OR_FORMAT, "Invalid Namespace or Format" },
	{ NVME_SC_COMMAND_SEQUENCE_ERROR, "Command Sequence Error" },
	{ NVME_SC_INVALID_SGL_SEG_DESCRIPTOR, "Invalid SGL Segment Descriptor" },
	{ NVME_SC_INVALID_NUM_SGL_DESCRIPTORS, "Invalid Number of SGL Descriptors" },
	{ NVME_SC_DATA_SGL_LENGTH_INVALID, "Data SGL Length Invalid" },
	{ NVME_SC_METADATA_SGL_LENGTH_INVALID, "Metadata SGL Length Invalid" },
	{ NVME_SC_SGL_DESCRIPTOR_TYPE_INVALID, "SGL Descriptor Type Invalid" },
	{ NVME_SC_INVALID_CONTROLLER_MEM_BUF, "Invalid Use of Controller Memory Buffer" },
	{ NVME_SC_INVALID_PRP_OFFSET, "PRP Offset Invalid" },
	{ NVME_SC_ATOMIC_WRITE_UNIT_EXCEEDED, "Atomic Write Unit Exceeded" },
	{ NVME_SC_OPERATION_DENIED, "Operation Denied" },
	{ NVME_SC_INVALID_SGL_OFFSET, "SGL Offset Invalid" },
	{ NVME_SC_HOSTID_INCONSISTENT_FORMAT, "Host Identifier Inconsistent Format" },
	{ NVME_SC_KEEP_ALIVE_EXPIRED, "Keep Alive Timer Expired" },
	{ NVME_SC_KEEP_ALIVE_INVALID, "Keep Alive Timeout Invalid" },
	{ NVME_SC_ABORTED_PREEMPT, "Command Aborted due to Preempt and Abort" },
	{ NVME_SC_SANITIZE_FAILED, "Sanitize Failed" },
	{ NVME_SC_SANITIZE_IN_PROGRESS, "Sanitize In Progress" },
	{ NVME_SC_SGL_DATA_BLOCK_GRANULARITY_INVALID, "SGL Data Block Granularity Invalid" },
	{ NVME_SC_COMMAND_INVALID_IN_CMB, "Command Not Supported for Queue in CMB" },
	{ NVME_SC_NAMESPACE_IS_WRITE_PROTECTED, "Namespace is Write Protected" },
	{ NVME_SC_COMMAND_INTERRUPTED, "Command Interrupted" },
	{ NVME_SC_TRANSIENT_TRANSPORT_ERROR, "Transient Transport Error" },
	{ NVME_SC_LBA_OUT_OF_RANGE, "LBA Out of Range" },
	{ NVME_SC_CAPACITY_EXCEEDED, "Capacity Exceeded" },
	{ NVME_SC_NAMESPACE_NOT_READY, "Namespace Not Ready" },
	{ NVME_SC_RESERVATION_CONFLICT, "Reservation Conflict" },
	{ NVME_SC_FORMAT_IN_PROGRESS, "Format In Progress" },
};

static const struct status_name g_command_specific_status[] = {
	{ NVME_SC_COMPLETION_QUEUE_INVALID, "Completion Queue Invalid" },
	{ NVME_SC_INVALID_QUEUE_IDENTIFIER, "Invalid Queue Identifier" },
	{ NVME_SC_INVALID_QUEUE_SIZE, "Invalid Queue Size" },
	{ NVME_SC_ABORT_COMMAND_LIMIT_EXCEEDED, "Abort Command Limit Exceeded" },
	{ NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED, "Asynchronous Event Request Limit Exceeded" },
	{ NVME_SC_INVALID_FIRMWARE_SLOT, "Invalid Firmware Slot" },
	{ NVME_SC_INVALID_FIRMWARE_IMAGE, "Invalid Firmware Image" },
	{ NVME_SC_INVALID_INTERRUPT_VECTOR, "Invalid Interrupt Vector" },
	{ NVME_SC_INVALID_LOG_PAGE, "Invalid Log Page" },
	{ NVME_SC_INVALID_FORMAT, "Invalid Format" },
	{ NVME_SC_FIRMWARE_REQ_CONVENTIONAL_RESET,
	  "Firmware Activation Requires Conventional Reset" },
	{ NVME_SC_INVALID_QUEUE_DELETION, "Invalid Queue Deletion" },
	{ NVME_SC_FEATURE_ID_NOT_SAVEABLE, "Feature Identifier Not Saveable" },
	{ NVME_SC_FEATURE_NOT_CHANGEABLE, "Feature Not Changeable" },
	{ NVME_SC_FEATURE_NOT_NAMESPACE_SPECIFIC, "Feature Not Namespace Specific" },
	{ NVME_SC_FIRMWARE_REQ_NVM_RESET, "Firmware Activation Requires NVM Subsystem Reset" },
	{ NVME_SC_FIRMWARE_REQ_RESET, "Firmware Activation Requires Controller Level Reset" },
	{ NVME_SC_FIRMWARE_REQ_MAX_TIME_VIOLATION, "Firmware Activation Requires Maximum Time "
						   "Violation" },
	{ NVME_SC_FIRMWARE_ACTIVATION_PROHIBITED, "Firmware Activation Prohibited" },
	{ NVME_SC_OVERLAPPING_RANGE, "Overlapping Range" },
	{ NVME_SC_NAMESPACE_INSUFFICIENT_CAPACITY, "Namespace Insufficient Capacity" },
	{ NVME_SC_NAMESPACE_ID_UNAVAILABLE, "Namespace Identifier Unavailable" },
	{ NVME_SC_NAMESPACE_ALREADY_ATTACHED, "Namespace Already Attached" },
	{ NVME_SC_NAMESPACE_IS_PRIVATE, "Namespace Is Private" },
	{ NVME_SC_NAMESPACE_NOT_ATTACHED, "Namespace Not Attached" },
	{ NVME_SC_THINPROVISIONING_NOT_SUPPORTED, "Thin Provisioning Not Supported" },
	{ NVME_SC_CONTROLLER_LIST_INVALID, "Controller List Invalid" },
	{ NVME_SC_DEVICE_SELF_TEST_IN_PROGRESS, "Device Self-test In Progress" },
	{ NVME_SC_BOOT_PARTITION_WRITE_PROHIBITED, "Boot Partition Write Prohibited" },
	{ NVME_SC_INVALID_CTRLR_ID, "Invalid Controller Identifier" },
	{ NVME_SC_INVALID_SECONDARY_CTRLR_STATE, "Invalid Secondary Controller State" },
	{ NVME_SC_INVALID_NUM_CTRLR_RESOURCES, "Invalid Number of Controller Resources" },
	{ NVME_SC_INVALID_RESOURCE_ID, "Invalid Resource Identifier" },
	{ NVME_SC_CONFLICTING_ATTRIBUTES, "Conflicting Attributes" },
	{ NVME_SC_INVALID_PROTECTION_INFO, "Invalid Protection Information" },
	{ NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE, "Attempted Write to Read Only Range" },
};

static const struct status_name g_media_error_status[] = {
	{ NVME_SC_WRITE_FAULTS, "Write Fault" },
	{ NVME_SC_UNRECOVERED_READ_ERROR, "Unrecovered Read Error" },
	{ NVME_SC_GUARD_CHECK_ERROR, "End-to-end Guard Check Error" },
	{ NVME_SC_APPLICATION_TAG_CHECK_ERROR, "End-to-end Application Tag Check Error" },
	{ NVME_SC_REFERENCE_TAG_CHECK_ERROR, "End-to-end Reference Tag Check Error" },
	{ NVME_SC_COMPARE_FAILURE, "Compare Failure" },
	{ NVME_SC_ACCESS_DENIED, "Access Denied" },
	{ NVME_SC_DEALLOCATED_OR_UNWRITTEN_BLOCK, "Deallocated or Unwritten Logical Block" },
};

static const struct status_name g_path_status[] = {
	{ NVME_SC_INTERNAL_PATH_ERROR, "Internal Path Error" },
	{ NVME_SC_CONTROLLER_PATH_ERROR, "Controller Pathing Error" },
	{ NVME_SC_ANA_PERSISTENT_LOSS, "Asymmetric Access Persistent Loss" },
	{ NVME_SC_ANA_INACCESSIBLE, "Asymmetric Access Inaccessible" },
	{ NVME_SC_ANA_TRANSITION, "Asymmetric Access Transition" },
	{ NVME_SC_HOST_PATH_ERROR, "Host Pathing Error" },
	{ NVME_SC_ABORTED_BY_HOST, "Command Aborted By Host" },
};

static const char *
status_lookup(const struct status_name *table, size_t n, uint8_t sc)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (table[i].sc == sc) {
			return table[i].name;
		}
	}
	return "Unknown";
}

const char *
nvp_nvme_status_string(uint8_t sct, uint8_t sc)
{
	switch (sct) {
	case NVME_SCT_GENERIC:
		return status_lookup(g_generic_status, NVP_COUNTOF(g_generic_status), sc);
	case NVME_SCT_COMMAND_SPECIFIC:
		return status_lookup(g_command_specific_status,
				     NVP_COUNTOF(g_command_specific_status), sc);
	case NVME_SCT_MEDIA_ERROR:
		return status_lookup(g_media_error_status, NVP_COUNTOF(g_media_error_status), sc);
	case NVME_SCT_PATH:
		return status_lookup(g_path_status, NVP_COUNTOF(g_path_status), sc);
	case NVME_SCT_VENDOR_SPECIFIC:
		return "Vendor Specific";
	default:
		return "Unknown";
	}
}

/* Fabrics command specific statuses: Connect's own (80h-84h), then any command's (90h). */
static const struct status_name g_connect_status[] = {
	{ NVME_SC_CONNECT_INCOMPATIBLE_FORMAT, "Connect Incompatible Format" },
	{ NVME_SC_CONNECT_CONTROLLER_BUSY, "Connect Controller Busy" },
	{ NVME_SC_CONNECT_INVALID_PARAMETERS, "Connect Invalid Parameters" },
	{ NVME_SC_CONNECT_RESTART_DISCOVERY, "Connect Restart Discovery" },
	{ NVME_SC_CONNECT_INVALID_HOST, "Connect Invalid Host" },
};

static const struct status_name g_fabric_status[] = {
	{ NVME_SC_FABRIC_DISCOVERY_RESTART, "Discovery Restart" },
	{ NVME_SC_FABRIC_AUTH_REQUIRED, "Authentication Required" },
};

const char *
nvp_nvme_fabrics_status_string(uint8_t fctype, uint8_t sct, uint8_t sc)
{
	const char *s = "Unknown";

	if (sct == NVME_SCT_COMMAND_SPECIFIC && fctype == NVME_FCTYPE_CONNECT) {
		s = status_lookup(g_connect_status, NVP_COUNTOF(g_connect_status), sc);
	}
	if (sct == NVME_SCT_COMMAND_SPECIFIC && strcmp(s, "Unknown") == 0) {
		s = status_lookup(g_fabric_status, NVP_COUNTOF(g_fabric_status), sc);
	}
	return strcmp(s, "Unknown") != 0 ? s : nvp_nvme_status_string(sct, sc);
}

const char *
nvp_nvme_sct_string(uint8_t sct)
{
	switch (sct) {
	case NVME_SCT_GENERIC:
		return "Generic Command Status";
	case NVME_SCT_COMMAND_SPECIFIC:
		return "Command Specific Status";
	case NVME_SCT_MEDIA_ERROR:
		return "Media and Data Integrity Errors";
	case NVME_SCT_PATH:
		return "Path Related Status";
	case NVME_SCT_VENDOR_SPECIFIC:
		return "Vendor Specific";
	default:
		return "Unknown";
	}
}

char *
nvp_nvme_cpl_fmt(char *buf, size_t len, const struct nvme_cpl *cpl)
{
	if (buf == NULL || len == 0) {
		return buf;
	}
	if (cpl == NULL) {
		nvp_strlcpy(buf, "(no completion)", len);
		return buf;
	}
	snprintf(buf, len, "%s (sct 0x%x, sc 0x%x%s)",
		 nvp_nvme_status_string(cpl->status.sct, cpl->status.sc), cpl->status.sct,
		 cpl->status.sc, cpl->status.dnr ? ", dnr" : "");
	return buf;
}

void
nvme_cpl_log(const char *what, const struct nvme_cpl *cpl)
{
	char buf[128];

	NVP_ERRLOG("%s failed: %s", what, nvp_nvme_cpl_fmt(buf, sizeof(buf), cpl));
}
