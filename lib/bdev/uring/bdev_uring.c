/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The uring module: a Linux regular file or block device through io_uring, so the bdev
 * layer (and its stages and poller) also runs over kernel devices and users can compare
 * the kernel's path with nvpoll's own in one tool.
 *
 * - The file is opened once, O_DIRECT (the page cache would measure memory, not the
 *   device); a file system that refuses O_DIRECT (tmpfs before Linux 6.6) gets the page
 *   cache, and the create call says so.
 * - One ring per channel, made on the channel's thread. Submit only fills an SQE; the
 *   channel's poll hands the batch to the kernel with one io_uring_enter() and reaps
 *   completions from the CQ ring (a syscall-free read when the ring is not polled).
 * - IORING_SETUP_IOPOLL when the file allows it: the kernel then polls the device's
 *   completion queue from io_uring_enter(GETEVENTS) instead of taking an interrupt. Only
 *   block devices with polled queues (nvme poll_queues=N) and files on them support it;
 *   create asks sysfs (queue/io_poll) and probes with one read, and falls back saying why. An IOPOLL ring takes only
 *   reads and writes, so flush, write zeroes and unmap then run synchronously in submit
 *   (fdatasync, fallocate) and complete on the next poll.
 * - Errors of the kernel (-errno in cqe->res) become NVMe status codes; a short transfer
 *   is an error (the bdev never extends past the file's whole blocks).
 *
 * Written against bdev_module.h only.
 */
#define _GNU_SOURCE /* O_DIRECT, fallocate() */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_uring"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nvpoll/bdev_module.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#define URING_DEPTH_DEFAULT 256u
#define URING_DEPTH_MAX 4096u

struct uring_bdev {
	struct nvp_bdev *bdev;
	int fd;
	bool iopoll;
	bool direct;
	uint32_t block_size;
	char *filename;
};

/* Per-I/O context: the synchronous path's result and its done list. */
struct uring_io {
	struct nvp_bdev_io *next;
	int res;
};

struct uring_channel {
	struct io_uring ring;
	struct uring_bdev *ub;
	uint32_t depth;
	uint32_t inflight; /* in the ring (SQEs filled, CQEs not reaped) */
	uint32_t unsubmitted;
	struct nvp_bdev_io *done_head; /* completed synchronously, delivered by poll */
	struct nvp_bdev_io *done_tail;
};

static inline struct uring_io *
uring_io_ctx(struct nvp_bdev_io *io)
{
	return (struct uring_io *)io->driver_ctx;
}

static bool
uring_io_type_supported(void *ctx, enum nvp_bdev_io_type type)
{
	(void)ctx;
	return type != NVP_BDEV_IO_COMPARE;
}

static int
uring_setup(struct io_uring *ring, uint32_t depth, bool iopoll)
{
	return io_uring_queue_init(depth, ring, iopoll ? IORING_SETUP_IOPOLL : 0);
}

static int
uring_channel_create(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx)
{
	struct uring_bdev *ub = ctx;
	struct uring_channel *ch;
	uint32_t depth = opts->module_queue_depth;
	int rc;

	if (depth == 0) {
		depth = NVP_MIN(opts->io_pool_size, URING_DEPTH_DEFAULT);
	}
	depth = NVP_MAX(NVP_MIN(depth, URING_DEPTH_MAX), 2u);
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		return -ENOMEM;
	}
	rc = uring_setup(&ch->ring, depth, ub->iopoll);
	if (rc != 0) {
		NVP_ERRLOG("%s: io_uring_queue_init(%" PRIu32 " entries) failed: %s (check "
			   "RLIMIT_MEMLOCK and /proc/sys/kernel/io_uring_disabled)",
			   ub->filename, depth, strerror(-rc));
		free(ch);
		return rc;
	}
	ch->ub = ub;
	ch->depth = depth;
	*ch_ctx = ch;
	return 0;
}

static void
uring_channel_destroy(void *ctx, void *ch_ctx)
{
	struct uring_channel *ch = ch_ctx;

	(void)ctx;
	io_uring_queue_exit(&ch->ring);
	free(ch);
}

/* Flush, write zeroes and unmap, done now: an IOPOLL ring only takes reads and writes. */
static int
uring_sync_op(struct uring_bdev *ub, struct nvp_bdev_io *io)
{
	off_t off = (off_t)(io->offset_blocks * ub->block_size);
	off_t len = (off_t)(io->num_blocks * ub->block_size);
	int mode = FALLOC_FL_KEEP_SIZE;

	if (io->type == NVP_BDEV_IO_FLUSH) {
		return fdatasync(ub->fd) == 0 ? 0 : -errno;
	}
	mode |= io->type == NVP_BDEV_IO_UNMAP ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE;
	return fallocate(ub->fd, mode, off, len) == 0 ? 0 : -errno;
}

static void
uring_prep(struct uring_bdev *ub, struct io_uring_sqe *sqe, struct nvp_bdev_io *io)
{
	uint64_t off = io->offset_blocks * ub->block_size;
	uint64_t len = io->num_blocks * ub->block_size;

	switch (io->type) {
	case NVP_BDEV_IO_READ:
		io_uring_prep_readv(sqe, ub->fd, io->iovs, (unsigned)io->iovcnt, off);
		break;
	case NVP_BDEV_IO_WRITE:
		io_uring_prep_writev(sqe, ub->fd, io->iovs, (unsigned)io->iovcnt, off);
		if (io->flags & NVP_BDEV_WRITE_FUA) {
			sqe->rw_flags = RWF_DSYNC;
		}
		break;
	case NVP_BDEV_IO_FLUSH:
		io_uring_prep_fsync(sqe, ub->fd, IORING_FSYNC_DATASYNC);
		break;
	case NVP_BDEV_IO_UNMAP:
		io_uring_prep_fallocate(sqe, ub->fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE,
					off, len);
		break;
	default: /* write zeroes; compare is not offered */
		io_uring_prep_fallocate(sqe, ub->fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_ZERO_RANGE,
					off, len);
		break;
	}
	io_uring_sqe_set_data(sqe, io);
}

static int
uring_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct uring_channel *ch = ch_ctx;
	struct io_uring_sqe *sqe;
	struct uring_io *uio;

	if (ch->ub->iopoll && io->type != NVP_BDEV_IO_READ && io->type != NVP_BDEV_IO_WRITE) {
		uio = uring_io_ctx(io);
		uio->res = uring_sync_op(ch->ub, io);
		uio->next = NULL;
		if (ch->done_tail != NULL) {
			uring_io_ctx(ch->done_tail)->next = io;
		} else {
			ch->done_head = io;
		}
		ch->done_tail = io;
		return 0;
	}
	/* Every I/O in the ring must find a CQE slot (CQ = 2 x SQ entries); when the ring is
	 * full the core sends it again from the poll loop. */
	sqe = ch->inflight < ch->depth ? io_uring_get_sqe(&ch->ring) : NULL;
	if (nvp_unlikely(sqe == NULL)) {
		nvp_bdev_io_submit_failed(io, -ENOMEM);
		return 0;
	}
	uring_prep(ch->ub, sqe, io);
	ch->inflight++;
	ch->unsubmitted++;
	return 0;
}

/* The kernel's result as an NVMe status (see the completion contract in bdev.h). */
static void
uring_complete(struct nvp_bdev_io *io, int res)
{
	uint8_t sct = NVME_SCT_GENERIC, sc = NVME_SC_INTERNAL_DEVICE_ERROR;

	if (res >= 0 && (io->iovs == NULL || (uint64_t)res == nvp_bdev_io_get_nbytes(io))) {
		nvp_bdev_io_complete_status(io, 0, 0);
		return;
	}
	if (res == -EOPNOTSUPP || res == -EINVAL) {
		sc = NVME_SC_INVALID_FIELD;
	} else if (res == -ENOSPC) {
		sct = NVME_SCT_COMMAND_SPECIFIC;
		sc = NVME_SC_CAPACITY_EXCEEDED;
	} else if (res == -EIO || res == -ENODATA) {
		sct = NVME_SCT_MEDIA_ERROR;
		sc = io->type == NVP_BDEV_IO_READ ? NVME_SC_UNRECOVERED_READ_ERROR :
						    NVME_SC_WRITE_FAULTS;
	}
	nvp_bdev_io_complete_status(io, sct, sc);
}

static void
uring_poll_done(struct uring_channel *ch)
{
	struct nvp_bdev_io *io = ch->done_head, *next;

	ch->done_head = ch->done_tail = NULL;
	for (; io != NULL; io = next) {
		next = uring_io_ctx(io)->next;
		uring_complete(io, uring_io_ctx(io)->res);
	}
}

static void
uring_poll(void *ch_ctx)
{
	struct uring_channel *ch = ch_ctx;
	struct io_uring_cqe *cqe;
	struct nvp_bdev_io *io;
	int rc = 0, res;

	if (nvp_unlikely(ch->done_head != NULL)) {
		uring_poll_done(ch);
	}
	if (ch->inflight == 0) {
		return;
	}
	/* One syscall hands over the batch (and, IOPOLL, polls the device). */
	if (ch->ub->iopoll) {
		rc = io_uring_submit_and_get_events(&ch->ring);
	} else if (ch->unsubmitted != 0) {
		rc = io_uring_submit(&ch->ring);
	}
	if (rc >= 0) {
		ch->unsubmitted = io_uring_sq_ready(&ch->ring);
	} else if (rc != -EAGAIN && rc != -EBUSY && rc != -EINTR) {
		NVP_ERRLOG("%s: io_uring_enter: %s", ch->ub->filename, strerror(-rc));
	}
	/* Each CQE is released before its callback, which may submit again. */
	while (io_uring_peek_cqe(&ch->ring, &cqe) == 0) {
		io = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&ch->ring, cqe);
		ch->inflight--;
		uring_complete(io, res);
	}
}

static void
uring_destruct(void *ctx)
{
	struct uring_bdev *ub = ctx;

	close(ub->fd);
	free(ub->filename);
	free(ub);
}

static const struct nvp_bdev_fn_table g_uring_fn = {
	.destruct = uring_destruct,
	.io_type_supported = uring_io_type_supported,
	.channel_create = uring_channel_create,
	.channel_destroy = uring_channel_destroy,
	.submit = uring_submit,
	.poll = uring_poll,
	.submit_never_completes = true, /* done list or the ring, completed by the poll */
};

void
nvp_bdev_uring_opts_init(struct nvp_bdev_uring_opts *opts, size_t opts_size)
{
	struct nvp_bdev_uring_opts d = { .opts_size = opts_size };

	if (opts == NULL) {
		return;
	}
	memset(opts, 0, opts_size);
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

/*
 * The caller's options over the defaults: a caller built against an older, shorter struct
 * gets the defaults for the fields past its opts_size, never the bytes after its struct.
 * A bad opts_size copies nothing; it stays in @o for uring_opts_check() to name.
 */
static void
uring_opts_get(const struct nvp_bdev_uring_opts *user, struct nvp_bdev_uring_opts *o)
{
	nvp_bdev_uring_opts_init(o, sizeof(*o));
	if (user->opts_size != 0 && user->opts_size <= sizeof(*o)) {
		memcpy(o, user, user->opts_size);
	}
	o->opts_size = user->opts_size;
}

static int
uring_opts_check(const struct nvp_bdev_uring_opts *o)
{
	const char *bad = NULL;

	if (o->opts_size == 0 || o->opts_size > sizeof(*o)) {
		bad = "opts_size (use nvp_bdev_uring_opts_init())";
	} else if (o->name == NULL || o->name[0] == '\0' || strlen(o->name) >= NVP_BDEV_NAME_MAX) {
		bad = "name (1 to 63 characters)";
	} else if (o->filename == NULL || o->filename[0] == '\0') {
		bad = "filename (a file or block device)";
	} else if (o->block_size != 0 &&
		   (o->block_size < 512 || o->block_size > 65536 || !NVP_IS_POW2(o->block_size))) {
		bad = "block_size (0 = detect, or 512 .. 65536, a power of two)";
	} else if ((unsigned)o->iopoll > NVP_BDEV_URING_IOPOLL_OFF) {
		bad = "iopoll (auto, on or off)";
	}
	if (bad != NULL) {
		NVP_ERRLOG("bdev_uring_create '%s': bad parameter %s",
			   o->name != NULL ? o->name : "(null)", bad);
		return -EINVAL;
	}
	return 0;
}

/* O_DIRECT, or the page cache when the file system refuses it. */
static int
uring_open(const char *filename, bool *direct)
{
	int fd = open(filename, O_RDWR | O_DIRECT | O_CLOEXEC);

	*direct = true;
	if (fd < 0 && errno == EINVAL) {
		NVP_NOTICELOG("%s: the file system refuses O_DIRECT; using the page cache",
			      filename);
		*direct = false;
		fd = open(filename, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0) {
		fd = -errno;
		NVP_ERRLOG("%s: cannot open read-write: %s", filename, strerror(errno));
	}
	return fd;
}

/* Block size (given, or the device's logical one) and whole blocks of the file. */
static int
uring_geometry(struct uring_bdev *ub, uint32_t block_size, uint64_t *num_blocks)
{
	struct stat st;
	uint64_t bytes;
	int lbs = 512;

	if (fstat(ub->fd, &st) != 0) {
		return -errno;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(ub->fd, BLKGETSIZE64, &bytes) != 0 ||
		    ioctl(ub->fd, BLKSSZGET, &lbs) != 0) {
			return -errno;
		}
	} else if (S_ISREG(st.st_mode)) {
		bytes = (uint64_t)st.st_size;
	} else {
		NVP_ERRLOG("%s: bad parameter filename (not a regular file or block device)",
			   ub->filename);
		return -EINVAL;
	}
	ub->block_size = block_size != 0 ? block_size : (uint32_t)lbs;
	*num_blocks = bytes / ub->block_size;
	if (*num_blocks == 0) {
		NVP_ERRLOG("%s: bad parameter filename (%" PRIu64 " bytes: smaller than one "
			   "block of %" PRIu32 ")",
			   ub->filename, bytes, ub->block_size);
		return -EINVAL;
	}
	return 0;
}

/* Read block 0 through a ring made with @iopoll: the kernel's answer (bytes or -errno). */
static int
uring_probe_read(struct uring_bdev *ub, bool iopoll)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	void *buf;
	int rc;

	if (posix_memalign(&buf, 4096, ub->block_size) != 0) {
		return -ENOMEM;
	}
	rc = uring_setup(&ring, 2, iopoll);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, ub->fd, buf, ub->block_size, 0);
	rc = io_uring_submit(&ring);
	if (rc == 1) {
		rc = io_uring_wait_cqe(&ring, &cqe);
		if (rc == 0) {
			rc = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
	} else if (rc >= 0) {
		rc = -EIO;
	}
	io_uring_queue_exit(&ring);
	free(buf);
	return rc;
}

/*
 * Read queue attribute @attr of the block device under @fd (itself, or the one holding
 * the file; a partition's parent) from sysfs. \return 0 and @val; -ENOENT no such block
 * device queue (@path says which was tried); -errno.
 */
static int
uring_queue_attr(int fd, const char *attr, char *path, size_t plen, char *val, size_t vlen)
{
	struct stat st;
	unsigned int maj, min;
	FILE *f;

	if (fstat(fd, &st) != 0) {
		return -errno;
	}
	maj = major(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	min = minor(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	snprintf(path, plen, "/sys/dev/block/%u:%u/queue/%s", maj, min, attr);
	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(path, plen, "/sys/dev/block/%u:%u/../queue/%s", maj, min, attr);
		f = fopen(path, "r");
	}
	if (f == NULL) {
		snprintf(path, plen, "device %u:%u", maj, min);
		return -ENOENT;
	}
	if (fgets(val, (int)vlen, f) == NULL) {
		val[0] = '\0';
	}
	fclose(f);
	return 0;
}

/*
 * Whether the device has polled queues (sysfs queue/io_poll). A read probe alone is not
 * enough: a read of a hole in a sparse file never reaches the device and succeeds under
 * IOPOLL, while later reads of written blocks would fail with -EOPNOTSUPP.
 * \return 1 polled, 0 not (@why says why).
 */
static int
uring_dev_polls(int fd, char *why, size_t len)
{
	char path[96], val[8] = "";

	if (uring_queue_attr(fd, "io_poll", path, sizeof(path), val, sizeof(val)) != 0) {
		snprintf(why, len, "%s is not a block device with queues", path);
		return 0;
	}
	if (val[0] != '1') {
		snprintf(why, len, "%s is %c: the device has no polled queues (nvme.poll_queues=N)",
			 path, val[0] != '\0' ? val[0] : '?');
		return 0;
	}
	return 1;
}

/* A number from queue attribute @attr, or 0. */
static uint64_t
uring_queue_u64(const struct uring_bdev *ub, const char *attr)
{
	char path[96], val[24] = "";
	uint64_t v;

	if (uring_queue_attr(ub->fd, attr, path, sizeof(path), val, sizeof(val)) != 0) {
		return 0;
	}
	val[strcspn(val, "\n")] = '\0';
	return nvp_strtou64(val, 1, UINT32_MAX, &v) == 0 ? v : 0;
}

/*
 * The largest request the device takes whole, in blocks, so the core splits larger ones
 * rather than the kernel: a polled request the kernel splits may leave a part on another
 * queue that IOPOLL never reaps (seen with Linux 6.1). Bounded by queue/max_sectors_kb and,
 * buffers being 4 KiB pages at worst, by queue/max_segments - 1 pages. 0 = no limit known.
 */
static uint32_t
uring_max_xfer_blocks(const struct uring_bdev *ub)
{
	uint64_t bytes = uring_queue_u64(ub, "max_sectors_kb") * 1024;
	uint64_t segs = uring_queue_u64(ub, "max_segments");

	if (segs > 1 && (bytes == 0 || (segs - 1) * 4096 < bytes)) {
		bytes = (segs - 1) * 4096;
	}
	return bytes >= ub->block_size ? (uint32_t)NVP_MIN(bytes / ub->block_size, UINT32_MAX) : 0;
}

/* IOPOLL when asked and the device polls; then check a plain read works. */
static int
uring_choose_mode(struct uring_bdev *ub, enum nvp_bdev_uring_iopoll want)
{
	char why[160] = "";
	int rc;

	if (want != NVP_BDEV_URING_IOPOLL_OFF && ub->direct) {
		rc = uring_dev_polls(ub->fd, why, sizeof(why));
		if (rc == 1) {
			rc = uring_probe_read(ub, true);
			if (rc == (int)ub->block_size) {
				ub->iopoll = true;
				return 0;
			}
			snprintf(why, sizeof(why), "a polled read answers: %s",
				 rc < 0 ? strerror(-rc) : "short read");
		}
		if (want == NVP_BDEV_URING_IOPOLL_ON) {
			NVP_ERRLOG("%s: iopoll=on but %s", ub->filename, why);
			return -EOPNOTSUPP;
		}
		NVP_NOTICELOG("%s: no IOPOLL (%s); interrupt-driven completions, reaped by the "
			      "channel's poll",
			      ub->filename, why);
	} else if (want == NVP_BDEV_URING_IOPOLL_ON) {
		NVP_ERRLOG("%s: iopoll=on needs O_DIRECT, which the file system refuses",
			   ub->filename);
		return -EOPNOTSUPP;
	}
	rc = uring_probe_read(ub, false);
	if (rc == (int)ub->block_size) {
		return 0;
	}
	NVP_ERRLOG("%s: a %" PRIu32 "-byte read of block 0 fails: %s%s", ub->filename,
		   ub->block_size, rc < 0 ? strerror(-rc) : "short read",
		   rc == -EINVAL ? " (the device's blocks are larger: give block_size=4096)" : "");
	return rc < 0 ? rc : -EIO;
}

static int
uring_register(struct uring_bdev *ub, const char *name, uint64_t num_blocks)
{
	struct nvp_bdev_spec spec;

	memset(&spec, 0, sizeof(spec));
	spec.name = name;
	spec.module_name = "uring";
	spec.block_size = ub->block_size;
	spec.num_blocks = num_blocks;
	spec.write_cache = true; /* the page cache or the device's: flush matters */
	spec.max_xfer_blocks = uring_max_xfer_blocks(ub);
	spec.io_ctx_size = sizeof(struct uring_io);
	spec.fn_table = &g_uring_fn;
	spec.ctx = ub;
	return nvp_bdev_register(&spec, &ub->bdev);
}

int
nvp_bdev_uring_create(const struct nvp_bdev_uring_opts *user, struct nvp_bdev **out)
{
	struct nvp_bdev_uring_opts o;
	struct uring_bdev *ub;
	uint64_t num_blocks = 0;
	int rc;

	if (user == NULL) {
		return -EINVAL;
	}
	uring_opts_get(user, &o);
	rc = uring_opts_check(&o);
	if (rc != 0) {
		return rc;
	}
	if (nvp_bdev_get_by_name(o.name) != NULL) {
		NVP_ERRLOG("bdev_uring_create: a bdev '%s' exists already", o.name);
		return -EEXIST;
	}
	ub = calloc(1, sizeof(*ub));
	if (ub == NULL || (ub->filename = strdup(o.filename)) == NULL) {
		free(ub);
		return -ENOMEM;
	}
	ub->fd = uring_open(o.filename, &ub->direct);
	if (ub->fd < 0) {
		rc = ub->fd;
		goto err_free;
	}
	rc = uring_geometry(ub, o.block_size, &num_blocks);
	if (rc == 0) {
		rc = uring_choose_mode(ub, o.iopoll);
	}
	if (rc == 0) {
		rc = uring_register(ub, o.name, num_blocks);
	}
	if (rc != 0) {
		close(ub->fd);
		goto err_free;
	}
	NVP_INFOLOG("%s: uring bdev '%s', %" PRIu64 " blocks of %" PRIu32 ", %s, %s", ub->filename,
		    o.name, num_blocks, ub->block_size, ub->direct ? "O_DIRECT" : "page cache",
		    ub->iopoll ? "IOPOLL" : "no IOPOLL");
	if (out != NULL) {
		*out = ub->bdev;
	}
	return 0;
err_free:
	free(ub->filename);
	free(ub);
	return rc;
}

static struct uring_bdev *
uring_bdev_of(const struct nvp_bdev *bdev)
{
	if (bdev == NULL || strcmp(nvp_bdev_get_module_name(bdev), "uring") != 0) {
		return NULL;
	}
	return nvp_bdev_get_module_ctx(bdev);
}

int
nvp_bdev_uring_delete(const char *name)
{
	struct nvp_bdev *bdev = name != NULL ? nvp_bdev_get_by_name(name) : NULL;

	if (uring_bdev_of(bdev) == NULL) {
		NVP_ERRLOG("bdev_uring_delete: no uring bdev '%s'", name != NULL ? name : "(null)");
		return -ENODEV;
	}
	return nvp_bdev_unregister(bdev);
}

bool
nvp_bdev_uring_is_iopoll(const struct nvp_bdev *bdev)
{
	struct uring_bdev *ub = uring_bdev_of(bdev);

	return ub != NULL && ub->iopoll;
}

bool
nvp_bdev_uring_is_direct(const struct nvp_bdev *bdev)
{
	struct uring_bdev *ub = uring_bdev_of(bdev);

	return ub != NULL && ub->direct;
}
