/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tgt's configuration: the "nvmf" subsystem of an SPDK-shaped JSON file (the "bdev"
 * one is nvp_bdev_load_config_file()'s). Methods, in order:
 *   nvmf_create_transport        {trtype: "TCP", in_capsule_data_size, max_io_size, ...}
 *   nvmf_create_subsystem        {nqn, serial_number, model_number, allow_any_host}
 *   nvmf_subsystem_add_ns        {nqn, namespace: {bdev_name, nsid}}  (or flat)
 *   nvmf_subsystem_add_listener  {nqn, listen_address: {trtype, adrfam, traddr, trsvcid}}
 *   nvmf_subsystem_add_host      {nqn, host, weight, latency_target_us}  (nvpoll's own two)
 * SPDK's other nvmf methods (nvmf_set_config, nvmf_set_max_subsystems, nvmf_set_crdt) and
 * their parameters this target has no use for are ignored, so SPDK's save_config loads;
 * an unknown method or parameter, a missing or wrong value is an error naming the entry.
 *
 * Tenants: every host NQN named anywhere gets a tenant id (1, 2, ... in order of first
 * appearance; 0 is any other host). When a host has a weight or a latency target, each
 * namespace of its subsystem is scheduled by "fair" with the weights of the tenants (1 for
 * those without one) and lat_us.N for the targets; if the bdev config chose "fair"
 * itself, its other parameters (depth, lag_kib, ...) are kept.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvpoll/sched.h"
#include "nvpoll/util.h"
#include "tgt.h"

struct cfg_ctx {
	struct tgt *t;
	const char *path;
	uint32_t entry;
	const char *method;
	char host_nqns[NVP_BDEV_MAX_TENANTS][NVME_NQN_FIELD_SIZE]; /* tenant id - 1 */
	uint32_t num_tenants;
};

static int
cfg_err(struct cfg_ctx *x, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "nvp_tgt: %s: nvmf config[%u] (%s): ", x->path, x->entry,
		x->method != NULL ? x->method : "?");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return -EINVAL;
}

/* Keys of @params must be in @known (NULL-terminated). */
static int
check_keys(struct cfg_ctx *x, json_object *params, const char *const *known)
{
	json_object_object_foreach(params, key, val)
	{
		bool ok = false;

		(void)val;
		for (const char *const *k = known; *k != NULL && !ok; k++) {
			ok = strcmp(*k, key) == 0;
		}
		if (!ok) {
			return cfg_err(x, "unknown parameter \"%s\"%s", key, "");
		}
	}
	return 0;
}

static const char *
get_str(json_object *o, const char *key)
{
	json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string)) {
		return NULL;
	}
	return json_object_get_string(v);
}

/* An unsigned number, or a string of one. \return 0, -ENOENT absent, -EINVAL bad. */
static int
get_u32(json_object *o, const char *key, uint32_t *out)
{
	json_object *v;
	uint64_t n;

	if (o == NULL || !json_object_object_get_ex(o, key, &v)) {
		return -ENOENT;
	}
	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i < 0 || i > UINT32_MAX) {
			return -EINVAL;
		}
		*out = (uint32_t)i;
		return 0;
	}
	if (json_object_is_type(v, json_type_string) &&
	    nvp_strtou64(json_object_get_string(v), 0, UINT32_MAX, &n) == 0) {
		*out = (uint32_t)n;
		return 0;
	}
	return -EINVAL;
}

static int
get_bool(json_object *o, const char *key, bool *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		return -ENOENT;
	}
	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v);
		return 0;
	}
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);

		if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
			*out = s[0] == 't';
			return 0;
		}
	}
	return -EINVAL;
}

struct tgt_subsys *
tgt_subsys_find(struct tgt *t, const char *nqn)
{
	for (uint32_t i = 0; i < t->num_subsys; i++) {
		if (strncmp(t->subsys[i]->nqn, nqn, NVME_NQN_FIELD_SIZE) == 0) {
			return t->subsys[i];
		}
	}
	return NULL;
}

const struct tgt_host *
tgt_subsys_host(const struct tgt_subsys *ss, const char *hostnqn)
{
	for (uint32_t i = 0; i < ss->num_hosts; i++) {
		if (strncmp(ss->hosts[i].nqn, hostnqn, NVME_NQN_FIELD_SIZE) == 0) {
			return &ss->hosts[i];
		}
	}
	return NULL;
}

bool
tgt_subsys_allows(const struct tgt_subsys *ss, const char *hostnqn, uint32_t lidx)
{
	if (!ss->discovery && lidx < TGT_MAX_LISTENERS && !ss->listener[lidx]) {
		return false;
	}
	return ss->discovery || ss->allow_any_host || tgt_subsys_host(ss, hostnqn) != NULL;
}

/* The subsystem named by params.nqn, which must exist. */
static struct tgt_subsys *
subsys_of(struct cfg_ctx *x, json_object *params)
{
	const char *nqn = get_str(params, "nqn");
	struct tgt_subsys *ss;

	if (nqn == NULL) {
		(void)cfg_err(x, "\"nqn\" (a string) is missing%s%s", "", "");
		return NULL;
	}
	ss = tgt_subsys_find(x->t, nqn);
	if (ss == NULL || ss->discovery) {
		(void)cfg_err(x, "no subsystem \"%s\" (nvmf_create_subsystem makes one)%s", nqn,
			      "");
		return NULL;
	}
	return ss;
}

static int
create_transport(struct cfg_ctx *x, json_object *p)
{
	static const char *const known[] = { "trtype",
					     "in_capsule_data_size",
					     "max_io_size",
					     "io_unit_size",
					     "max_queue_depth",
					     "max_io_qpairs_per_ctrlr",
					     "max_aq_depth",
					     "num_shared_buffers",
					     "buf_cache_size",
					     "dif_insert_or_strip",
					     "c2h_success",
					     "sock_priority",
					     "abort_timeout_sec",
					     "zcopy",
					     "ack_timeout",
					     "data_wr_pool_size",
					     NULL };
	const char *tr = get_str(p, "trtype");
	uint32_t v;
	int rc = check_keys(x, p, known);

	if (rc != 0) {
		return rc;
	}
	if (tr == NULL || strcasecmp(tr, "TCP") != 0) {
		return cfg_err(x, "trtype \"%s\": only TCP is served%s", tr ? tr : "(none)", "");
	}
	rc = get_u32(p, "in_capsule_data_size", &v);
	if (rc == 0 && (v < 4096 || v > 65536 || v % 16 != 0)) {
		rc = -EINVAL;
	}
	if (rc == -EINVAL) {
		return cfg_err(x, "in_capsule_data_size: 4096 .. 65536, a multiple of 16%s%s", "",
			       "");
	}
	if (rc == 0) {
		x->t->opts.in_capsule = v;
	}
	return 0;
}

static int
create_subsystem(struct cfg_ctx *x, json_object *p)
{
	static const char *const known[] = { "nqn",
					     "serial_number",
					     "model_number",
					     "allow_any_host",
					     "max_namespaces",
					     "ana_reporting",
					     "min_cntlid",
					     "max_cntlid",
					     NULL };
	const char *nqn = get_str(p, "nqn"), *sn = get_str(p, "serial_number");
	const char *mn = get_str(p, "model_number");
	struct tgt_subsys *ss;
	int rc = check_keys(x, p, known);

	if (rc != 0) {
		return rc;
	}
	if (nqn == NULL || nqn[0] == '\0' || strlen(nqn) > TGT_NQN_MAX ||
	    strncmp(nqn, "nqn.", 4) != 0) {
		return cfg_err(x, "nqn \"%s\": an NQN (\"nqn.\" ..., at most 223 bytes)%s",
			       nqn ? nqn : "(none)", "");
	}
	if (tgt_subsys_find(x->t, nqn) != NULL) {
		return cfg_err(x, "subsystem \"%s\" made twice%s", nqn, "");
	}
	if (x->t->num_subsys == TGT_MAX_SUBSYS + 1) {
		return cfg_err(x, "more than %s subsystems%s", "32", "");
	}
	if ((sn != NULL && strlen(sn) > 20) || (mn != NULL && strlen(mn) > 40)) {
		return cfg_err(x, "serial_number is at most 20 characters, model_number 40%s%s", "",
			       "");
	}
	ss = calloc(1, sizeof(*ss));
	if (ss == NULL) {
		return -ENOMEM;
	}
	nvp_strlcpy(ss->nqn, nqn, sizeof(ss->nqn));
	nvp_strlcpy(ss->sn, sn != NULL ? sn : TGT_DEFAULT_SN, sizeof(ss->sn));
	nvp_strlcpy(ss->mn, mn != NULL ? mn : TGT_DEFAULT_MN, sizeof(ss->mn));
	rc = get_bool(p, "allow_any_host", &ss->allow_any_host);
	x->t->subsys[x->t->num_subsys++] = ss;
	return rc == -EINVAL ? cfg_err(x, "allow_any_host: true or false%s%s", "", "") : 0;
}

/* A 16-byte NGUID for the namespace, stable across restarts: FNV-1a of NQN and nsid. */
static void
make_nguid(const char *nqn, uint32_t nsid, uint8_t *out)
{
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };

	for (int k = 0; k < 2; k++) {
		for (const char *s = nqn; *s != '\0'; s++) {
			h[k] = (h[k] ^ (uint8_t)*s) * 0x100000001b3ull;
		}
		for (int i = 0; i < 4; i++) {
			h[k] = (h[k] ^ ((nsid >> (8 * i)) & 0xffu)) * 0x100000001b3ull;
		}
	}
	memcpy(out, h, 16);
}

static int
add_ns(struct cfg_ctx *x, json_object *p)
{
	static const char *const known[] = { "nqn", "namespace", "bdev_name", "nsid", NULL };
	static const char *const known_ns[] = { "bdev_name", "nsid",      "nguid",    "uuid",
						"eui64",     "ptpl_file", "anagrpid", NULL };
	struct tgt_subsys *ss = subsys_of(x, p);
	json_object *ns = NULL;
	const char *name;
	struct tgt_ns *n;
	uint32_t nsid = 0;
	int rc;

	if (ss == NULL || check_keys(x, p, known) != 0) {
		return -EINVAL;
	}
	if (json_object_object_get_ex(p, "namespace", &ns)) {
		if (!json_object_is_type(ns, json_type_object) ||
		    check_keys(x, ns, known_ns) != 0) {
			return cfg_err(x, "namespace: an object {bdev_name, nsid}%s%s", "", "");
		}
		p = ns;
	}
	name = get_str(p, "bdev_name");
	if (name == NULL || nvp_bdev_get_by_name(name) == NULL) {
		return cfg_err(x,
			       "bdev_name \"%s\": no such bdev (make it in the \"bdev\" "
			       "subsystem%s)",
			       name != NULL ? name : "(none)", " before \"nvmf\"");
	}
	rc = get_u32(p, "nsid", &nsid);
	if (rc == -EINVAL || nsid == 0xffffffffu) {
		return cfg_err(x, "nsid: 1 .. 4294967294%s%s", "", "");
	}
	for (uint32_t i = 0; i < ss->num_ns; i++) {
		if (nsid == 0) {
			nsid = NVP_MAX(nsid, ss->ns[i].nsid);
		} else if (ss->ns[i].nsid == nsid) {
			return cfg_err(x, "nsid already used in %s%s", ss->nqn, "");
		}
	}
	if (rc == -ENOENT) {
		nsid = 0;
		for (uint32_t i = 0; i < ss->num_ns; i++) {
			nsid = NVP_MAX(nsid, ss->ns[i].nsid);
		}
		nsid++;
	}
	if (ss->num_ns == TGT_MAX_NS) {
		return cfg_err(x, "more than %s namespaces in a subsystem%s", "32", "");
	}
	n = &ss->ns[ss->num_ns++];
	n->nsid = nsid;
	n->bdev = nvp_bdev_get_by_name(name);
	nvp_strlcpy(n->bdev_name, name, sizeof(n->bdev_name));
	make_nguid(ss->nqn, nsid, n->nguid);
	return 0;
}

/* The listener for @traddr:@trsvcid, opened if new. \return its index or -errno. */
static int
listener_get(struct cfg_ctx *x, const char *traddr, const char *trsvcid, int family)
{
	struct tgt *t = x->t;
	struct tgt_listener *l;
	struct sockaddr_in *a4;
	struct sockaddr_in6 *a6;
	uint64_t port;
	int one = 1, fd;

	if (nvp_strtou64(trsvcid, 0, 65535, &port) != 0) {
		return cfg_err(x, "trsvcid \"%s\": a TCP port number%s", trsvcid, "");
	}
	for (uint32_t i = 0; i < t->num_listeners; i++) {
		if (strcmp(t->listeners[i].traddr, traddr) == 0 && port != 0 &&
		    strcmp(t->listeners[i].trsvcid, trsvcid) == 0) {
			return (int)i;
		}
	}
	if (t->num_listeners == TGT_MAX_LISTENERS) {
		return cfg_err(x, "more than %s listeners%s", "16", "");
	}
	l = &t->listeners[t->num_listeners];
	memset(&l->sa, 0, sizeof(l->sa));
	a4 = (struct sockaddr_in *)&l->sa;
	a6 = (struct sockaddr_in6 *)&l->sa;
	if (family == AF_INET && inet_pton(AF_INET, traddr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		l->salen = sizeof(*a4);
	} else if (family == AF_INET6 && inet_pton(AF_INET6, traddr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		l->salen = sizeof(*a6);
	} else {
		return cfg_err(x, "traddr \"%s\" is not a numeric %s address", traddr,
			       family == AF_INET ? "IPv4" : "IPv6");
	}
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	if (family == AF_INET6) {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&l->sa, l->salen) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&l->sa, &l->salen) != 0) {
		int rc = -errno;

		fprintf(stderr, "nvp_tgt: cannot listen on %s port %s: %s%s\n", traddr, trsvcid,
			strerror(-rc),
			rc == -EADDRINUSE ? " (another program has it: choose another trsvcid)" :
					    "");
		close(fd);
		return rc;
	}
	l->fd = fd;
	l->family = family;
	nvp_strlcpy(l->traddr, traddr, sizeof(l->traddr));
	snprintf(l->trsvcid, sizeof(l->trsvcid), "%u",
		 ntohs(family == AF_INET6 ? a6->sin6_port : a4->sin_port));
	return (int)t->num_listeners++;
}

static int
add_listener(struct cfg_ctx *x, json_object *p)
{
	static const char *const known[] = { "nqn",    "listen_address", "trtype",         "adrfam",
					     "traddr", "trsvcid",        "secure_channel", NULL };
	static const char *const known_la[] = { "trtype", "adrfam", "traddr", "trsvcid", NULL };
	struct tgt_subsys *ss = subsys_of(x, p);
	json_object *la;
	const char *tr, *af, *addr, *svc;
	int family, idx;

	if (ss == NULL || check_keys(x, p, known) != 0) {
		return -EINVAL;
	}
	if (json_object_object_get_ex(p, "listen_address", &la)) {
		if (!json_object_is_type(la, json_type_object) ||
		    check_keys(x, la, known_la) != 0) {
			return cfg_err(x, "listen_address: {trtype, adrfam, traddr, trsvcid}%s%s",
				       "", "");
		}
		p = la;
	}
	tr = get_str(p, "trtype");
	af = get_str(p, "adrfam");
	addr = get_str(p, "traddr");
	svc = get_str(p, "trsvcid");
	if (tr == NULL || strcasecmp(tr, "TCP") != 0) {
		return cfg_err(x, "trtype \"%s\": only TCP%s", tr ? tr : "(none)", "");
	}
	if (af == NULL || (strcasecmp(af, "IPv4") != 0 && strcasecmp(af, "IPv6") != 0)) {
		return cfg_err(x, "adrfam \"%s\": IPv4 or IPv6%s", af ? af : "(none)", "");
	}
	if (addr == NULL) {
		return cfg_err(x, "traddr is missing%s%s", "", "");
	}
	family = strcasecmp(af, "IPv6") == 0 ? AF_INET6 : AF_INET;
	idx = listener_get(x, addr, svc != NULL ? svc : "4420", family);
	if (idx < 0) {
		return idx;
	}
	ss->listener[idx] = true;
	return 0;
}

static uint32_t
tenant_of(struct cfg_ctx *x, const char *nqn)
{
	for (uint32_t i = 0; i < x->num_tenants; i++) {
		if (strcmp(x->host_nqns[i], nqn) == 0) {
			return i + 1;
		}
	}
	if (x->num_tenants == NVP_BDEV_MAX_TENANTS - 1) {
		return 0;
	}
	nvp_strlcpy(x->host_nqns[x->num_tenants], nqn, NVME_NQN_FIELD_SIZE);
	return ++x->num_tenants;
}

static int
add_host(struct cfg_ctx *x, json_object *p)
{
	static const char *const known[] = {
		"nqn", "host",       "weight",           "latency_target_us",
		"psk", "dhchap_key", "dhchap_ctrlr_key", NULL
	};
	struct tgt_subsys *ss = subsys_of(x, p);
	const char *host;
	struct tgt_host *h;
	int rc;

	if (ss == NULL || check_keys(x, p, known) != 0) {
		return -EINVAL;
	}
	host = get_str(p, "host");
	if (host == NULL || strlen(host) > TGT_NQN_MAX || strncmp(host, "nqn.", 4) != 0) {
		return cfg_err(x, "host \"%s\": a host NQN (\"nqn.\" ...)%s",
			       host ? host : "(none)", "");
	}
	if (tgt_subsys_host(ss, host) != NULL || ss->num_hosts == TGT_MAX_HOSTS) {
		return cfg_err(x, "host \"%s\" listed twice, or more than 32 hosts in %s", host,
			       ss->nqn);
	}
	h = &ss->hosts[ss->num_hosts];
	nvp_strlcpy(h->nqn, host, sizeof(h->nqn));
	rc = get_u32(p, "weight", &h->weight);
	if (rc == -EINVAL || (rc == 0 && (h->weight < 1 || h->weight > 1000))) {
		return cfg_err(x, "weight: 1 .. 1000%s%s", "", "");
	}
	rc = get_u32(p, "latency_target_us", &h->lat_us);
	if (rc == -EINVAL) {
		return cfg_err(x, "latency_target_us: microseconds%s%s", "", "");
	}
	h->tenant = tenant_of(x, host);
	if (h->tenant == 0) {
		return cfg_err(x, "more than 63 host NQNs%s%s", "", "");
	}
	x->t->any_weight |= h->weight != 0 || h->lat_us != 0;
	ss->num_hosts++;
	return 0;
}

/*
 * The "fair" parameters of @b: those the bdev config gave it, if it chose "fair" (depth,
 * lag_kib, ...), without their weights and latency targets, then the hosts' (@ours).
 */
static void
merge_params(struct nvp_bdev *b, const char *ours, char *out, size_t len)
{
	const char *given = strcmp(nvp_bdev_get_scheduler(b), "fair") == 0 ?
				    nvp_bdev_get_scheduler_params(b) :
				    NULL;
	size_t off = 0;

	out[0] = '\0';
	while (given != NULL && *given != '\0') {
		size_t n = strcspn(given, " ,\t");

		if (n != 0 && strncmp(given, "weights=", 8) != 0 &&
		    strncmp(given, "lat_us.", 7) != 0 && off + n + 1 < len) {
			memcpy(out + off, given, n);
			off += n;
			out[off++] = ' ';
			out[off] = '\0';
		}
		given += n;
		given += strspn(given, " ,\t");
	}
	nvp_strlcpy(out + off, ours, len - off);
}

/* The namespaces of subsystems with weighted hosts: "fair" with the hosts' weights. */
static int
apply_tenants(struct cfg_ctx *x)
{
	struct tgt *t = x->t;

	for (uint32_t s = 1; s < t->num_subsys; s++) {
		struct tgt_subsys *ss = t->subsys[s];
		uint32_t w[NVP_BDEV_MAX_TENANTS], lat[NVP_BDEV_MAX_TENANTS], max = 0;
		char params[1024];
		size_t off;
		bool any = false;

		for (uint32_t i = 0; i < NVP_BDEV_MAX_TENANTS; i++) {
			w[i] = 1;
			lat[i] = 0;
		}
		for (uint32_t i = 0; i < ss->num_hosts; i++) {
			const struct tgt_host *h = &ss->hosts[i];

			w[h->tenant] = h->weight != 0 ? h->weight : 1;
			lat[h->tenant] = h->lat_us;
			max = NVP_MAX(max, h->tenant);
			any |= h->weight != 0 || h->lat_us != 0;
		}
		if (!any) {
			continue;
		}
		off = (size_t)snprintf(params, sizeof(params), "weights=");
		for (uint32_t i = 0; i <= max && off < sizeof(params); i++) {
			off += (size_t)snprintf(params + off, sizeof(params) - off, "%s%u",
						i ? "/" : "", w[i]);
		}
		for (uint32_t i = 0; i <= max && off < sizeof(params); i++) {
			if (lat[i] != 0) {
				off += (size_t)snprintf(params + off, sizeof(params) - off,
							" lat_us.%u=%u", i, lat[i]);
			}
		}
		for (uint32_t i = 0; i < ss->num_ns; i++) {
			struct nvp_bdev *b = ss->ns[i].bdev;
			char merged[2048];
			int rc;

			merge_params(b, params, merged, sizeof(merged));
			rc = nvp_bdev_set_scheduler(b, "fair", merged);
			if (rc != 0) {
				fprintf(stderr, "nvp_tgt: bdev %s: scheduler fair \"%s\": %s\n",
					nvp_bdev_get_name(b), merged, strerror(-rc));
				return rc;
			}
			printf("nvp_tgt: namespace %u of %s (bdev %s): scheduler fair %s\n",
			       ss->ns[i].nsid, ss->nqn, nvp_bdev_get_name(b), merged);
		}
	}
	return 0;
}

static int
run_method(struct cfg_ctx *x, json_object *e)
{
	json_object *m, *params = NULL;
	const char *method;

	if (!json_object_is_type(e, json_type_object) ||
	    !json_object_object_get_ex(e, "method", &m) ||
	    !json_object_is_type(m, json_type_string)) {
		return cfg_err(x, "an entry is {\"method\": ..., \"params\": {...}}%s%s", "", "");
	}
	method = json_object_get_string(m);
	x->method = method;
	if (json_object_object_get_ex(e, "params", &params) &&
	    !json_object_is_type(params, json_type_object)) {
		return cfg_err(x, "params must be an object%s%s", "", "");
	}
	if (params == NULL) {
		params = json_object_new_object();
		json_object_object_add(e, "params", params);
	}
	if (strcmp(method, "nvmf_create_transport") == 0) {
		return create_transport(x, params);
	} else if (strcmp(method, "nvmf_create_subsystem") == 0) {
		return create_subsystem(x, params);
	} else if (strcmp(method, "nvmf_subsystem_add_ns") == 0) {
		return add_ns(x, params);
	} else if (strcmp(method, "nvmf_subsystem_add_listener") == 0) {
		return add_listener(x, params);
	} else if (strcmp(method, "nvmf_subsystem_add_host") == 0) {
		return add_host(x, params);
	} else if (strcmp(method, "nvmf_set_config") == 0 ||
		   strcmp(method, "nvmf_set_max_subsystems") == 0 ||
		   strcmp(method, "nvmf_set_crdt") == 0) {
		return 0;
	}
	return cfg_err(x,
		       "unknown method \"%s\" (known: nvmf_create_transport, "
		       "nvmf_create_subsystem, nvmf_subsystem_add_ns, "
		       "nvmf_subsystem_add_listener, nvmf_subsystem_add_host)%s",
		       method, "");
}

static int
discovery_subsys(struct tgt *t)
{
	struct tgt_subsys *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		return -ENOMEM;
	}
	nvp_strlcpy(d->nqn, NVME_DISCOVERY_NQN, sizeof(d->nqn));
	nvp_strlcpy(d->sn, TGT_DEFAULT_SN, sizeof(d->sn));
	nvp_strlcpy(d->mn, TGT_DEFAULT_MN, sizeof(d->mn));
	d->discovery = true;
	d->allow_any_host = true;
	t->subsys[0] = d;
	t->num_subsys = 1;
	return 0;
}

/* The "nvmf" subsystem's config array of the parsed file, or NULL. */
static json_object *
nvmf_config(json_object *root)
{
	json_object *subs;

	if (!json_object_object_get_ex(root, "subsystems", &subs) ||
	    !json_object_is_type(subs, json_type_array)) {
		return NULL;
	}
	for (size_t i = 0; i < json_object_array_length(subs); i++) {
		json_object *s = json_object_array_get_idx(subs, i), *cfg;
		const char *name = get_str(s, "subsystem");

		if (name != NULL && strcmp(name, "nvmf") == 0 &&
		    json_object_object_get_ex(s, "config", &cfg) &&
		    json_object_is_type(cfg, json_type_array)) {
			return cfg;
		}
	}
	return NULL;
}

int
tgt_config_load(struct tgt *t, const char *path)
{
	struct cfg_ctx *x = calloc(1, sizeof(*x));
	json_object *root, *cfg;
	int rc;

	if (x == NULL || discovery_subsys(t) != 0) {
		free(x);
		return -ENOMEM;
	}
	x->t = t;
	x->path = path;
	root = json_object_from_file(path);
	if (root == NULL) {
		fprintf(stderr, "nvp_tgt: %s: cannot read it as JSON\n", path);
		free(x);
		return -EINVAL;
	}
	cfg = nvmf_config(root);
	rc = cfg == NULL ? -EINVAL : 0;
	if (rc != 0) {
		fprintf(stderr,
			"nvp_tgt: %s: no \"nvmf\" subsystem with a \"config\" array: nothing to "
			"serve (see nvp_tgt(8) for an example)\n",
			path);
	}
	for (size_t i = 0; rc == 0 && i < json_object_array_length(cfg); i++) {
		x->entry = (uint32_t)i;
		x->method = NULL;
		rc = run_method(x, json_object_array_get_idx(cfg, i));
	}
	if (rc == 0 && t->num_listeners == 0) {
		fprintf(stderr,
			"nvp_tgt: %s: no nvmf_subsystem_add_listener: nothing to listen "
			"on\n",
			path);
		rc = -EINVAL;
	}
	if (rc == 0) {
		rc = apply_tenants(x);
	}
	json_object_put(root);
	free(x);
	return rc;
}

void
tgt_config_free(struct tgt *t)
{
	for (uint32_t i = 0; i < t->num_listeners; i++) {
		close(t->listeners[i].fd);
	}
	t->num_listeners = 0;
	for (uint32_t i = 0; i < t->num_subsys; i++) {
		free(t->subsys[i]);
	}
	t->num_subsys = 0;
}
