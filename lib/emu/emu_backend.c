/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Namespace storage: ram (sparse anonymous mapping), null (reads zeroes, drops writes)
 * and file (one file per namespace, PATH.ns<N>, pread/pwrite, flush = fdatasync).
 *
 * Data is kept as a byte array of the namespace size; the LBA format only changes how
 * LBAs address it, so a format never moves data (it erases it to zeroes). Metadata
 * (formats 2 and 3, opts.ms > 0) is kept apart, in RAM, ms bytes per LBA.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fallocate */
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_internal.h"

#define PAGE_4K 4096u

/* ---- ram ---- */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Available memory in bytes (/proc/meminfo MemAvailable), 0 if unknown. */
static uint64_t
mem_available(void)
{
	unsigned long long kib = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL) {
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			break;
		}
	}
	fclose(f);
	return (uint64_t)kib * 1024;
}

/*
 * Fault the whole namespace in now. Left sparse, every first touch of a page during a
 * benchmark is a page fault on the controller's thread: measured with nvp_perf -q 32
 * randread on size=1G, 265,000 minor faults in a 4 s run and a first second at a third
 * to a half of the later IOPS. Transparent huge pages, where the kernel allows them on
 * request, make the mapping 512 times fewer pages to fault and to miss in the TLB.
 * A namespace larger than a quarter of the available memory stays sparse (say so).
 */
static void
ram_prefault(struct emu_ctrlr *c, struct emu_ns *ns)
{
	uint64_t avail;

	if (!c->opts.prefault) {
		return;
	}
	avail = mem_available();
	(void)madvise(ns->mem, ns->size, MADV_HUGEPAGE); /* a hint: fine if refused */
	if (avail == 0 || ns->size > avail / 4) {
		NVP_NOTICELOG("emu %s: namespace %u (%llu MiB) is not pre-faulted (more than a "
			      "quarter of the %llu MiB available): the first pass over it runs "
			      "slower (page faults)",
			      c->opts.name, ns->nsid, (unsigned long long)(ns->size >> 20),
			      (unsigned long long)(avail >> 20));
		return;
	}
	if (madvise(ns->mem, ns->size, MADV_POPULATE_WRITE) == 0) {
		return;
	}
	for (uint64_t off = 0; off < ns->size; off += PAGE_4K) {
		((volatile uint8_t *)ns->mem)[off] = 0; /* kernels before 5.14 */
	}
}

static int
ram_open(struct emu_ctrlr *c, struct emu_ns *ns)
{
	void *p = mmap(NULL, ns->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		NVP_ERRLOG("emu %s: cannot map %llu bytes for namespace %u: %s; lower size=",
			   c->opts.name, (unsigned long long)ns->size, ns->nsid, strerror(errno));
		return -ENOMEM;
	}
	ns->mem = p;
	ram_prefault(c, ns);
	return 0;
}

static void
ram_close(struct emu_ns *ns)
{
	if (ns->mem != NULL) {
		munmap(ns->mem, ns->size);
		ns->mem = NULL;
	}
}

static int
ram_read(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl)
{
	const uint8_t *src = ns->mem + off;

	for (uint32_t i = 0; i < sgl->nsegs; i++) {
		memcpy(sgl->segs[i].addr, src, sgl->segs[i].len);
		src += sgl->segs[i].len;
	}
	return 0;
}

static int
ram_write(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl)
{
	uint8_t *dst = ns->mem + off;

	for (uint32_t i = 0; i < sgl->nsegs; i++) {
		memcpy(dst, sgl->segs[i].addr, sgl->segs[i].len);
		dst += sgl->segs[i].len;
	}
	return 0;
}

static int
ram_read_buf(struct emu_ns *ns, uint64_t off, void *buf, uint64_t len)
{
	memcpy(buf, ns->mem + off, len);
	return 0;
}

/* Zero a range: whole pages go back to the kernel (the mapping stays sparse). */
static int
ram_zero(struct emu_ns *ns, uint64_t off, uint64_t len)
{
	uint64_t start = NVP_ALIGN_UP(off, (uint64_t)PAGE_4K);
	uint64_t end = (off + len) & ~((uint64_t)PAGE_4K - 1);

	if (end <= start || end - start < 16 * PAGE_4K) {
		memset(ns->mem + off, 0, len);
		return 0;
	}
	memset(ns->mem + off, 0, start - off);
	if (madvise(ns->mem + start, end - start, MADV_DONTNEED) != 0) {
		memset(ns->mem + start, 0, end - start);
	}
	memset(ns->mem + end, 0, off + len - end);
	return 0;
}

static int
nop_flush(struct emu_ns *ns)
{
	(void)ns;
	return 0;
}

static const struct emu_backend_ops g_ram_ops = {
	.name = "ram",
	.open = ram_open,
	.close = ram_close,
	.read = ram_read,
	.write = ram_write,
	.read_buf = ram_read_buf,
	.zero = ram_zero,
	.flush = nop_flush,
};

/* ---- null ---- */

static int
null_open(struct emu_ctrlr *c, struct emu_ns *ns)
{
	(void)c;
	(void)ns;
	return 0;
}

static void
null_close(struct emu_ns *ns)
{
	(void)ns;
}

static int
null_read(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl)
{
	(void)ns;
	(void)off;
	for (uint32_t i = 0; i < sgl->nsegs; i++) {
		memset(sgl->segs[i].addr, 0, sgl->segs[i].len);
	}
	return 0;
}

static int
null_write(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl)
{
	(void)ns;
	(void)off;
	(void)sgl;
	return 0;
}

static int
null_read_buf(struct emu_ns *ns, uint64_t off, void *buf, uint64_t len)
{
	(void)ns;
	(void)off;
	memset(buf, 0, len);
	return 0;
}

static int
null_zero(struct emu_ns *ns, uint64_t off, uint64_t len)
{
	(void)ns;
	(void)off;
	(void)len;
	return 0;
}

static const struct emu_backend_ops g_null_ops = {
	.name = "null",
	.open = null_open,
	.close = null_close,
	.read = null_read,
	.write = null_write,
	.read_buf = null_read_buf,
	.zero = null_zero,
	.flush = nop_flush,
};

/* ---- file ---- */

static int
file_open(struct emu_ctrlr *c, struct emu_ns *ns)
{
	char path[sizeof(c->opts.backend_path) + 16];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s.ns%u", c->opts.backend_path, ns->nsid);
	/* 0600: namespace data is nobody else's business on a shared machine. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		NVP_ERRLOG("emu %s: cannot open backend file %s: %s; check the backend=file: path",
			   c->opts.name, path, strerror(errno));
		return -EIO;
	}
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != ns->size) {
		if (ftruncate(fd, (off_t)ns->size) != 0) {
			NVP_ERRLOG("emu %s: cannot size %s to %llu bytes: %s", c->opts.name, path,
				   (unsigned long long)ns->size, strerror(errno));
			close(fd);
			return -EIO;
		}
	}
	ns->fd = fd;
	return 0;
}

static void
file_close(struct emu_ns *ns)
{
	if (ns->fd >= 0) {
		fdatasync(ns->fd);
		close(ns->fd);
		ns->fd = -1;
	}
}

static int
file_pio(int fd, uint8_t *buf, uint64_t len, uint64_t off, bool write)
{
	while (len > 0) {
		ssize_t n = write ? pwrite(fd, buf, len, (off_t)off) :
				    pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		if (n == 0) {
			/* Reading past EOF (file shrunk behind our back): zeroes. */
			if (write) {
				return -EIO;
			}
			memset(buf, 0, len);
			return 0;
		}
		buf += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int
file_rw(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl, bool write)
{
	for (uint32_t i = 0; i < sgl->nsegs; i++) {
		int rc = file_pio(ns->fd, sgl->segs[i].addr, sgl->segs[i].len, off, write);

		if (rc != 0) {
			return rc;
		}
		off += sgl->segs[i].len;
	}
	return 0;
}

static int
file_read(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl)
{
	return file_rw(ns, off, sgl, false);
}

static int
file_write(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl)
{
	if (ns->plm != NULL) {
		uint64_t len = 0;
		int rc;

		for (uint32_t i = 0; i < sgl->nsegs; i++) {
			len += sgl->segs[i].len;
		}
		rc = emu_plm_record(ns, off, len);
		if (rc != 0) {
			return rc;
		}
	}
	return file_rw(ns, off, sgl, true);
}

static int
file_read_buf(struct emu_ns *ns, uint64_t off, void *buf, uint64_t len)
{
	return file_pio(ns->fd, buf, len, off, false);
}

static int
file_zero(struct emu_ns *ns, uint64_t off, uint64_t len)
{
	static const uint8_t zeroes[PAGE_4K];

	if (ns->plm != NULL) {
		int rc = emu_plm_record(ns, off, len);

		if (rc != 0) {
			return rc;
		}
	}
	if (fallocate(ns->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) ==
	    0) {
		return 0;
	}
	while (len > 0) {
		uint64_t n = NVP_MIN(len, (uint64_t)sizeof(zeroes));
		int rc = file_pio(ns->fd, (uint8_t *)(uintptr_t)zeroes, n, off, true);

		if (rc != 0) {
			return rc;
		}
		off += n;
		len -= n;
	}
	return 0;
}

static int
file_flush(struct emu_ns *ns)
{
	if (fdatasync(ns->fd) != 0) {
		return -errno;
	}
	emu_plm_flushed(ns);
	return 0;
}

static const struct emu_backend_ops g_file_ops = {
	.name = "file",
	.open = file_open,
	.close = file_close,
	.read = file_read,
	.write = file_write,
	.read_buf = file_read_buf,
	.zero = file_zero,
	.flush = file_flush,
};

const struct emu_backend_ops *
emu_backend_get(enum nvp_emu_backend type)
{
	switch (type) {
	case NVP_EMU_BACKEND_RAM:
		return &g_ram_ops;
	case NVP_EMU_BACKEND_NULL:
		return &g_null_ops;
	case NVP_EMU_BACKEND_FILE:
		return &g_file_ops;
	}
	return NULL;
}

/*
 * Compare the host memory of @sgl with the medium at @off, through @bounce.
 * \return 0 and *@equal, or -errno from the backend.
 */
int
emu_backend_compare(struct emu_ns *ns, uint64_t off, const struct emu_sgl *sgl, uint8_t *bounce,
		    uint32_t bounce_len, bool *equal)
{
	*equal = true;
	for (uint32_t i = 0; i < sgl->nsegs; i++) {
		const uint8_t *host = sgl->segs[i].addr;
		uint64_t left = sgl->segs[i].len;

		while (left > 0) {
			uint64_t n = NVP_MIN(left, (uint64_t)bounce_len);
			int rc = ns->ops->read_buf(ns, off, bounce, n);

			if (rc != 0) {
				return rc;
			}
			if (memcmp(bounce, host, n) != 0) {
				*equal = false;
				return 0;
			}
			host += n;
			off += n;
			left -= n;
		}
	}
	return 0;
}

/*
 * Formats 0 and 1: 512 B and 4 KiB blocks; 2 and 3: the same with ms_opt bytes of
 * metadata (interleaved or separate as ns->mset says), kept in ns->md at ms per LBA.
 */
void
emu_ns_set_format(struct emu_ns *ns, uint8_t lbaf)
{
	ns->lbaf = lbaf;
	ns->lba_shift = (lbaf & 1u) == 0 ? 9 : 12;
	ns->nsze = ns->size >> ns->lba_shift;
	ns->ms = lbaf >= 2 ? ns->ms_opt : 0;
	if (ns->md != NULL) {
		memset(ns->md, 0, ns->md_len);
	}
}

/* Metadata store for the largest number of blocks (512 B) at ms_opt bytes each. */
static int
ns_md_init(struct emu_ns *ns)
{
	void *p;

	if (ns->ms_opt == 0) {
		return 0;
	}
	ns->md_len = (ns->size >> 9) * ns->ms_opt;
	p = mmap(NULL, ns->md_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		NVP_ERRLOG("emu: cannot map %llu bytes of metadata for namespace %u: %s",
			   (unsigned long long)ns->md_len, ns->nsid, strerror(errno));
		return -ENOMEM;
	}
	ns->md = p;
	return 0;
}

/* Identifiers unique per controller name and namespace: a CRC of both. */
static void
ns_make_ids(struct emu_ctrlr *c, struct emu_ns *ns)
{
	uint32_t h1 = nvp_crc32c(~0u, c->opts.name, strlen(c->opts.name));
	uint32_t h2 = nvp_crc32c(h1, &ns->nsid, sizeof(ns->nsid));
	uint32_t h3 = nvp_crc32c(h2, "nguid", 5);

	ns->eui64[0] = (EMU_IEEE_OUI >> 16) & 0xff;
	ns->eui64[1] = (EMU_IEEE_OUI >> 8) & 0xff;
	ns->eui64[2] = EMU_IEEE_OUI & 0xff;
	ns->eui64[3] = (uint8_t)(h1 >> 8);
	ns->eui64[4] = (uint8_t)h1;
	ns->eui64[5] = (uint8_t)(h2 >> 8);
	ns->eui64[6] = (uint8_t)h2;
	ns->eui64[7] = (uint8_t)ns->nsid;
	memcpy(ns->nguid, &h1, 4);
	memcpy(ns->nguid + 4, &h2, 4);
	memcpy(ns->nguid + 8, &h3, 4);
	memcpy(ns->nguid + 12, &ns->nsid, 4);
}

int
emu_ns_init(struct emu_ctrlr *c, struct emu_ns *ns, uint32_t nsid, uint32_t lba_size)
{
	memset(ns, 0, sizeof(*ns));
	ns->nsid = nsid;
	ns->fd = -1;
	ns->size = c->opts.ns_size;
	ns->ops = emu_backend_get(c->opts.backend);
	if (ns->ops == NULL) {
		return -EINVAL;
	}
	ns->ms_opt = (uint16_t)c->opts.ms;
	ns->mset = c->opts.mset;
	if (ns_md_init(ns) != 0) {
		return -ENOMEM;
	}
	emu_ns_set_format(ns, (lba_size == 4096 ? 1 : 0) + (ns->ms_opt != 0 ? 2 : 0));
	ns_make_ids(c, ns);
	if (c->opts.backend == NVP_EMU_BACKEND_FILE && emu_plm_init(c, ns) != 0) {
		return -ENOMEM;
	}
	return ns->ops->open(c, ns);
}

void
emu_ns_fini(struct emu_ns *ns)
{
	emu_plm_fini(ns);
	if (ns->md != NULL) {
		munmap(ns->md, ns->md_len);
		ns->md = NULL;
	}
	if (ns->ops != NULL) {
		ns->ops->close(ns);
		ns->ops = NULL;
	}
}
