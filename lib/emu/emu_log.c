/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error log, SMART / health counters, Get Log Page, asynchronous events and the
 * temperature threshold model (NVMe 1.4, sections 5.2, 5.14.1, 5.21.1.4).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu_internal.h"

#define LOG_BUF_SIZE 4096u
#define DB_WARN_LIMIT 8u
#define SMART_FILE_MAGIC 0x4e56504du /* "NVPM" */
#define SMART_FILE_VERSION 1u

/* What the file backend keeps of SMART across restarts, in PATH.smart. */
struct smart_file {
	uint32_t magic;
	uint32_t version;
	uint64_t power_cycles;
	uint64_t unsafe_shutdowns;
	uint64_t power_on_secs;
	uint64_t bytes_read;
	uint64_t bytes_written;
	uint64_t read_cmds;
	uint64_t write_cmds;
	uint64_t media_errors;
};

void
emu_log_init(struct emu_ctrlr *c)
{
	memset(c->errlog, 0, sizeof(c->errlog));
	c->errlog_next = 0;
	c->err_count = 0;
	memset(&c->smart, 0, sizeof(c->smart));
	c->smart.power_cycles = 1;
	c->smart.temperature = EMU_TEMP_KELVIN;
	emu_aen_reset(c);
}

static void
smart_path(const struct emu_ctrlr *c, char *path, size_t len)
{
	snprintf(path, len, "%s.smart", c->opts.backend_path);
}

static uint64_t
uptime_secs(const struct emu_ctrlr *c)
{
	return c->ticks_hz ? (nvp_env_get_ticks() - c->create_ticks) / c->ticks_hz : 0;
}

/* File backend: continue the counters of the previous life of this device. */
void
emu_smart_load(struct emu_ctrlr *c)
{
	char path[sizeof(c->opts.backend_path) + 8];
	struct smart_file f;
	int fd;

	if (c->opts.backend != NVP_EMU_BACKEND_FILE) {
		return;
	}
	smart_path(c, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return;
	}
	if (pread(fd, &f, sizeof(f), 0) == (ssize_t)sizeof(f) && f.magic == SMART_FILE_MAGIC &&
	    f.version == SMART_FILE_VERSION) {
		c->smart.power_cycles = f.power_cycles + 1;
		c->smart.unsafe_shutdowns = f.unsafe_shutdowns;
		c->smart.power_on_secs = f.power_on_secs;
		c->smart.bytes_read = f.bytes_read;
		c->smart.bytes_written = f.bytes_written;
		c->smart.read_cmds = f.read_cmds;
		c->smart.write_cmds = f.write_cmds;
		c->smart.media_errors = f.media_errors;
	}
	close(fd);
}

/*
 * Power off. Without a completed shutdown notification while enabled, it counts as an
 * unsafe shutdown; the file backend saves the counters for the next life.
 */
void
emu_smart_save(struct emu_ctrlr *c)
{
	char path[sizeof(c->opts.backend_path) + 8];
	struct smart_file f;
	int fd;

	if (c->state != EMU_STATE_DISABLED && c->csts.bits.shst != NVME_SHST_COMPLETE) {
		c->smart.unsafe_shutdowns++;
	}
	if (c->opts.backend != NVP_EMU_BACKEND_FILE) {
		return;
	}
	memset(&f, 0, sizeof(f));
	f.magic = SMART_FILE_MAGIC;
	f.version = SMART_FILE_VERSION;
	f.power_cycles = c->smart.power_cycles;
	f.unsafe_shutdowns = c->smart.unsafe_shutdowns;
	f.power_on_secs = c->smart.power_on_secs + uptime_secs(c);
	f.bytes_read = c->smart.bytes_read;
	f.bytes_written = c->smart.bytes_written;
	f.read_cmds = c->smart.read_cmds;
	f.write_cmds = c->smart.write_cmds;
	f.media_errors = c->smart.media_errors;
	smart_path(c, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || pwrite(fd, &f, sizeof(f), 0) != (ssize_t)sizeof(f) || fdatasync(fd) != 0) {
		NVP_WARNLOG("emu %s: cannot save SMART counters to %s: %s", c->opts.name, path,
			    strerror(errno));
	}
	if (fd >= 0) {
		close(fd);
	}
}

/* Statuses that report what the host asked for rather than an error of the device. */
static bool
st_is_logged(uint16_t st)
{
	if (EMU_ST_SCT(st) == NVME_SCT_GENERIC) {
		return EMU_ST_SC(st) != NVME_SC_ABORTED_BY_REQUEST &&
		       EMU_ST_SC(st) != NVME_SC_ABORTED_SQ_DELETION;
	}
	if (EMU_ST_SCT(st) == NVME_SCT_COMMAND_SPECIFIC) {
		return EMU_ST_SC(st) != NVME_SC_FIRMWARE_REQ_CONVENTIONAL_RESET;
	}
	return true;
}

static uint64_t
cmd_lba(uint16_t sqid, const struct nvme_cmd *cmd)
{
	if (sqid == 0 || cmd == NULL) {
		return 0;
	}
	switch (cmd->opc) {
	case NVME_OPC_READ:
	case NVME_OPC_WRITE:
	case NVME_OPC_COMPARE:
	case NVME_OPC_WRITE_ZEROES:
		return ((uint64_t)cmd->cdw11 << 32) | cmd->cdw10;
	default:
		return 0;
	}
}

/* Record an error in the error log ring and the SMART counters. */
void
emu_log_error(struct emu_ctrlr *c, uint16_t sqid, const struct nvme_cmd *cmd, uint16_t st,
	      uint64_t cmd_specific)
{
	struct nvme_error_information_entry *e;

	if (cmd != NULL && !st_is_logged(st)) {
		return;
	}
	if (EMU_ST_SCT(st) == NVME_SCT_MEDIA_ERROR && EMU_ST_SC(st) != NVME_SC_COMPARE_FAILURE) {
		c->smart.media_errors++;
	}
	e = &c->errlog[c->errlog_next];
	c->errlog_next = (c->errlog_next + 1) % EMU_ERRLOG_ENTRIES;
	memset(e, 0, sizeof(*e));
	e->error_count = ++c->err_count;
	e->sqid = sqid;
	e->cid = cmd != NULL ? cmd->cid : 0xffff;
	e->status.sc = EMU_ST_SC(st);
	e->status.sct = EMU_ST_SCT(st);
	e->status.dnr = EMU_ST_DNR(st);
	e->error_location = 0xffff;
	e->lba = cmd_lba(sqid, cmd);
	e->nsid = cmd != NULL ? cmd->nsid : 0;
	e->command_specific = cmd_specific;
}

/* A doorbell write for a queue that does not exist or with a value out of range. */
void
emu_invalid_doorbell(struct emu_ctrlr *c, uint16_t qid, int is_cq, uint32_t value, uint8_t info)
{
	uint64_t n = __atomic_load_n(&c->stats.invalid_doorbells, __ATOMIC_RELAXED);

	EMU_STAT_ADD(c, invalid_doorbells, 1);
	if (n < DB_WARN_LIMIT) {
		NVP_WARNLOG("emu %s: invalid %s doorbell write %u for queue %u (%s)%s",
			    c->opts.name, is_cq ? "CQ head" : "SQ tail", value, qid,
			    info == EMU_AER_INFO_INVALID_DB_REG ? "no such queue" : "out of range",
			    n + 1 == DB_WARN_LIMIT ? "; further ones are counted silently" : "");
	}
	emu_log_error(c, qid, NULL, EMU_GEN(NVME_SC_INVALID_FIELD), value);
	emu_aen_raise(c, NVME_ASYNC_EVENT_TYPE_ERROR, info, NVME_LOG_ERROR);
}

/* ---- asynchronous events (section 5.2) ---- */

void
emu_aen_reset(struct emu_ctrlr *c)
{
	c->naer = 0; /* the slots themselves are freed by the queue reset */
	c->nevents = 0;
	c->aen_masked = 0;
}

/* Is the event enabled by the Asynchronous Event Configuration feature? */
static bool
aen_enabled(const struct emu_ctrlr *c, uint8_t type, uint8_t info)
{
	switch (type) {
	case NVME_ASYNC_EVENT_TYPE_SMART:
		switch (info) {
		case NVME_ASYNC_EVENT_SUBSYSTEM_RELIABILITY:
			return c->feat.aec & NVME_CRIT_WARN_DEVICE_RELIABILITY;
		case NVME_ASYNC_EVENT_TEMPERATURE_THRESHOLD:
			return c->feat.aec & NVME_CRIT_WARN_TEMPERATURE;
		case NVME_ASYNC_EVENT_SPARE_BELOW_THRESHOLD:
			return c->feat.aec & NVME_CRIT_WARN_AVAILABLE_SPARE;
		default:
			return true;
		}
	case NVME_ASYNC_EVENT_TYPE_NOTICE:
		return c->feat.aec & (1u << (8 + info));
	default:
		return true; /* error events cannot be masked */
	}
}

void
emu_aen_raise(struct emu_ctrlr *c, uint8_t type, uint8_t info, uint8_t lid)
{
	if (!aen_enabled(c, type, info)) {
		return;
	}
	for (uint32_t i = 0; i < c->nevents; i++) {
		if (c->events[i].type == type && c->events[i].info == info) {
			return; /* already waiting */
		}
	}
	if (c->nevents == EMU_EVENT_QUEUE) {
		return;
	}
	c->events[c->nevents].type = type;
	c->events[c->nevents].info = info;
	c->events[c->nevents].lid = lid;
	c->nevents++;
	emu_aen_deliver(c);
}

/*
 * Complete outstanding AERs with waiting events. An event type stays masked after it is
 * reported until the host reads its log page (section 5.2).
 */
void
emu_aen_deliver(struct emu_ctrlr *c)
{
	uint32_t i = 0;

	while (c->naer > 0 && i < c->nevents) {
		struct emu_event ev = c->events[i];
		uint16_t idx;

		if (c->aen_masked & (1u << ev.type)) {
			i++;
			continue;
		}
		memmove(&c->events[i], &c->events[i + 1], (c->nevents - i - 1) * sizeof(ev));
		c->nevents--;
		idx = c->aer_slots[0];
		memmove(&c->aer_slots[0], &c->aer_slots[1], (c->naer - 1) * sizeof(idx));
		c->naer--;
		c->slots[idx].cdw0 = ev.type | ((uint32_t)ev.info << 8) | ((uint32_t)ev.lid << 16);
		c->slots[idx].st = EMU_ST_OK;
		c->aen_masked |= (uint8_t)(1u << ev.type);
		emu_cmd_complete(c, idx);
	}
}

enum emu_exec_result
emu_aer_submit(struct emu_ctrlr *c, uint16_t idx)
{
	if (c->naer >= EMU_AERL + 1) {
		c->slots[idx].st = EMU_CS(NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED);
		return EMU_EXEC_DONE;
	}
	c->aer_slots[c->naer++] = idx;
	emu_aen_deliver(c);
	return EMU_EXEC_HELD;
}

/*
 * Composite temperature against the thresholds: crossing one sets the critical warning
 * and raises a SMART/health event; moving the threshold back clears the warning.
 */
void
emu_temp_update(struct emu_ctrlr *c)
{
	uint16_t t = c->smart.temperature;
	bool over = t >= c->feat.temp_over;
	bool under = c->feat.temp_under != 0 && t <= c->feat.temp_under;
	bool was = c->smart.critical_warning & NVME_CRIT_WARN_TEMPERATURE;

	if (over || under) {
		c->smart.critical_warning |= NVME_CRIT_WARN_TEMPERATURE;
		if (!was) {
			emu_aen_raise(c, NVME_ASYNC_EVENT_TYPE_SMART,
				      NVME_ASYNC_EVENT_TEMPERATURE_THRESHOLD,
				      NVME_LOG_HEALTH_INFORMATION);
		}
	} else {
		c->smart.critical_warning &= (uint8_t)~NVME_CRIT_WARN_TEMPERATURE;
	}
}

/* ---- log pages (section 5.14.1) ---- */

static uint32_t
build_error_log(const struct emu_ctrlr *c, uint8_t *buf)
{
	struct nvme_error_information_entry *out = (void *)buf;
	uint64_t n = NVP_MIN(c->err_count, (uint64_t)EMU_ERRLOG_ENTRIES);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t at = (c->errlog_next + EMU_ERRLOG_ENTRIES - 1 - i) % EMU_ERRLOG_ENTRIES;

		out[i] = c->errlog[at]; /* newest first */
	}
	return EMU_ERRLOG_ENTRIES * sizeof(*out);
}

static uint64_t
data_units(uint64_t bytes)
{
	/* thousands of 512-byte units, rounded up (figure 194) */
	return (bytes + 512u * 1000u - 1) / (512u * 1000u);
}

static uint32_t
build_health_log(const struct emu_ctrlr *c, uint8_t *buf)
{
	struct nvme_health_information_page *h = (void *)buf;
	uint64_t secs = c->smart.power_on_secs + uptime_secs(c);

	h->critical_warning = c->smart.critical_warning;
	h->temperature = c->smart.temperature;
	h->available_spare = 100;
	h->available_spare_threshold = 10;
	h->percentage_used = 0;
	h->data_units_read[0] = data_units(c->smart.bytes_read);
	h->data_units_written[0] = data_units(c->smart.bytes_written);
	h->host_read_commands[0] = c->smart.read_cmds;
	h->host_write_commands[0] = c->smart.write_cmds;
	h->controller_busy_time[0] = c->ticks_hz ? c->smart.busy_ticks / c->ticks_hz / 60 : 0;
	h->power_cycles[0] = c->smart.power_cycles;
	h->power_on_hours[0] = secs / 3600;
	h->unsafe_shutdowns[0] = c->smart.unsafe_shutdowns;
	h->media_errors[0] = c->smart.media_errors;
	h->num_error_info_log_entries[0] = c->err_count;
	h->temp_sensor[0] = c->smart.temperature;
	return sizeof(*h);
}

/* Build log page @lid into @buf. \return its size, or 0 for an unknown page. */
static uint32_t
build_log(struct emu_ctrlr *c, uint8_t lid, uint8_t *buf)
{
	switch (lid) {
	case NVME_LOG_ERROR:
		return build_error_log(c, buf);
	case NVME_LOG_HEALTH_INFORMATION:
		return build_health_log(c, buf);
	case NVME_LOG_FIRMWARE_SLOT:
		emu_fw_build_log(c, (struct nvme_firmware_page *)(void *)buf);
		return sizeof(struct nvme_firmware_page);
	default:
		return 0;
	}
}

static void
log_read_done(struct emu_ctrlr *c, uint8_t lid)
{
	switch (lid) {
	case NVME_LOG_ERROR:
		c->aen_masked &= (uint8_t) ~(1u << NVME_ASYNC_EVENT_TYPE_ERROR);
		break;
	case NVME_LOG_HEALTH_INFORMATION:
		c->aen_masked &= (uint8_t) ~(1u << NVME_ASYNC_EVENT_TYPE_SMART);
		break;
	case NVME_LOG_FIRMWARE_SLOT:
		c->aen_masked &= (uint8_t) ~(1u << NVME_ASYNC_EVENT_TYPE_NOTICE);
		break;
	default:
		return;
	}
	emu_aen_deliver(c);
}

/* Zero the host memory of @sgl from byte @skip on. */
static void
sgl_zero_from(const struct emu_sgl *sgl, uint64_t skip)
{
	for (uint32_t i = 0; i < sgl->nsegs; i++) {
		struct emu_seg *sg = &sgl->segs[i];

		if (skip >= sg->len) {
			skip -= sg->len;
			continue;
		}
		memset(sg->addr + skip, 0, sg->len - skip);
		skip = 0;
	}
}

/*
 * Get Log Page: CDW10 LID 7:0, RAE 15, NUMDL 31:16; CDW11 NUMDU 15:0; CDW12/13 offset
 * in bytes (dword aligned). Bytes past the end of the page read as zeroes.
 */
uint16_t
emu_log_get_page(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	_Alignas(8) uint8_t buf[LOG_BUF_SIZE];
	uint8_t lid = cmd->cdw10 & 0xff;
	bool rae = (cmd->cdw10 >> 15) & 1u;
	uint64_t numd = (((uint64_t)(cmd->cdw11 & 0xffff) << 16) | (cmd->cdw10 >> 16)) + 1;
	uint64_t len = numd * 4, off = ((uint64_t)cmd->cdw13 << 32) | cmd->cdw12;
	uint32_t size;
	uint16_t st;

	memset(buf, 0, sizeof(buf));
	if (lid == NVP_EMU_LOG_FTL) {
		size = emu_ftl_build_log(c, cmd->nsid, buf); /* vendor specific: emu_dir.c */
		if (size == 0) {
			return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
		}
	} else if (lid >= NVME_LOG_FDP_CONFIGS && lid <= NVME_LOG_FDP_EVENTS) {
		st = emu_fdp_build_log(c, cmd, buf, &size); /* endurance group scoped */
		if (st != EMU_ST_OK) {
			return st;
		}
	} else {
		size = build_log(c, lid, buf);
	}
	if (size == 0) {
		return EMU_CS(NVME_SC_INVALID_LOG_PAGE);
	}
	if (lid == NVME_LOG_HEALTH_INFORMATION && cmd->nsid != 0 && cmd->nsid != 0xffffffffu) {
		return EMU_GEN(NVME_SC_INVALID_FIELD); /* no per-namespace SMART (LPA bit 0) */
	}
	if ((off & 3u) || off >= size) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	st = emu_map_data(c, cmd, len);
	if (st != EMU_ST_OK) {
		return st;
	}
	emu_sgl_to_host(&c->sgl, buf + off, NVP_MIN(len, size - off));
	if (len > size - off) {
		sgl_zero_from(&c->sgl, size - off);
	}
	if (!rae) {
		log_read_done(c, lid);
	}
	return EMU_ST_OK;
}
