/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared helpers of the functional tests: environment set-up, software controllers
 * attached through the PCIe transport, synchronous I/O that never waits forever,
 * self-describing data patterns, scatter lists for readv/writev, and a CUnit main.
 *
 * Every wait has a deadline: a lost completion fails the test instead of hanging it.
 */
#ifndef NVP_TEST_FIXTURE_H
#define NVP_TEST_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <CUnit/Basic.h>

#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

/* How long a test waits for one completion before calling it lost. */
#define FX_WAIT_MS 10000u

/* A software controller (or a real one, see fx_real_trid()) and the driver's view of it. */
struct fx_ctrlr {
	struct nvp_emu_ctrlr *emu; /* NULL when made through "trtype:emu" or real */
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;        /* first active namespace */
	struct nvp_nvme_qpair *qpair;  /* an I/O qpair with default options */
	uint64_t dma_rejects_expected; /* bad addresses a test gave the device on purpose */
};

/* Completion record: how many times the callback ran, and the last entry it got. */
struct fx_cpl {
	unsigned int calls;
	struct nvme_cpl cpl;
};

/* The callback for struct fx_cpl (cb_arg must point at one). */
void fx_cpl_cb(void *cb_arg, const struct nvme_cpl *cpl);

/* ---- time ---- */
uint64_t fx_now_us(void);

/* ---- controllers ---- */

/* Create a software controller from an options string ("nn=2,lba=512/4096"). */
int fx_emu_create(const char *emu_opts, struct nvp_emu_ctrlr **emu);

/* "trtype:PCIe traddr:<emu's address>" into @buf. */
void fx_pcie_trid_str(const struct nvp_emu_ctrlr *emu, char *buf, size_t len);

/*
 * Real-controller mode: when the environment variable NVP_TEST_TRID is set (e.g.
 * "trtype:PCIe traddr:0000:00:04.0"), fx_open() attaches to that controller instead of
 * creating a software one (fx->emu is NULL), takes namespace NVP_TEST_NSID (default: the
 * first active one), and fx_main() lets env enumerate real PCI functions.
 * \return the transport ID string, or NULL in the usual software-controller mode.
 */
const char *fx_real_trid(void);

/* True if @fx drives a software controller (its emu is there to ask and to fault). */
bool fx_is_emu(const struct fx_ctrlr *fx);

/*
 * For tests that need the software controller (fault injection, emu stats, emu options):
 * in real-controller mode print "SKIP (needs the software controller): @reason" and return
 * true (the test returns early); else false.
 */
bool fx_skip_real(const char *reason);

#define FX_NEEDS_EMU(reason)                \
	do {                                \
		if (fx_skip_real(reason)) { \
			return;             \
		}                           \
	} while (0)

/*
 * For a test written for one block size: in real-controller mode, when @fx's namespace
 * has another, print "SKIP (...)" and return true (the caller closes @fx and returns).
 * With a software controller always false (the test asked for the size it needs).
 */
bool fx_skip_unless_bs(const struct fx_ctrlr *fx, uint32_t block_size);

/* Attach to @emu through the PCIe transport; @opts may be NULL. */
int fx_connect_pcie(struct nvp_emu_ctrlr *emu, const struct nvp_nvme_ctrlr_opts *opts,
		    struct nvp_nvme_ctrlr **ctrlr);

/* Attach by transport ID string. */
int fx_connect_str(const char *trid_str, const struct nvp_nvme_ctrlr_opts *opts,
		   struct nvp_nvme_ctrlr **ctrlr);

/*
 * Create a software controller with @emu_opts, attach through PCIe, take the first
 * namespace and allocate a default qpair (real-controller mode: @emu_opts is ignored,
 * see fx_real_trid()). CUnit assertions record what fails.
 * \return 0 or the first -errno.
 */
int fx_open(struct fx_ctrlr *fx, const char *emu_opts);

/* As fx_open() with controller options. */
int fx_open_opts(struct fx_ctrlr *fx, const char *emu_opts, const struct nvp_nvme_ctrlr_opts *opts);

/* Free the qpair, detach, destroy the software controller; asserts each step. */
void fx_close(struct fx_ctrlr *fx);

/* Allocate a qpair of @entries entries (0 = default) and @requests requests (0 = four
 * per entry). */
int fx_qpair_alloc(struct nvp_nvme_ctrlr *ctrlr, uint32_t entries, uint32_t requests,
		   uint64_t timeout_us, bool delay_doorbell, struct nvp_nvme_qpair **qpair);

/* ---- waiting ---- */

/*
 * Poll @qpair until *@counter reaches @target or @timeout_ms passes.
 * \return 0, -ETIMEDOUT, or the negative value process_completions() returned.
 */
int fx_poll_until(struct nvp_nvme_qpair *qpair, const unsigned int *counter, unsigned int target,
		  uint32_t timeout_ms);

/* As fx_poll_until() for the admin queue. */
int fx_poll_admin_until(struct nvp_nvme_ctrlr *ctrlr, const unsigned int *counter,
			unsigned int target, uint32_t timeout_ms);

/* Poll @qpair for @ms milliseconds whatever happens (to catch late duplicates). */
void fx_poll_for(struct nvp_nvme_qpair *qpair, uint32_t ms);

/* ---- synchronous I/O ---- */

enum fx_io_op {
	FX_READ,
	FX_WRITE,
	FX_COMPARE,
	FX_WRITE_ZEROES,
	FX_FLUSH,
};

/*
 * Submit one command and wait for it.
 * \return the submit call's -errno if it refused; -ETIMEDOUT if no completion came;
 * -EIO if the completion carried an error status (in *@cpl if not NULL); 0 on success.
 */
int fx_io(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, enum fx_io_op op, void *buf,
	  uint64_t lba, uint32_t lba_count, uint32_t io_flags, struct nvme_cpl *cpl);

/*
 * As fx_io() with a separate metadata buffer @md (lba_count x the namespace's metadata size,
 * DMA memory) through the _with_md calls, for FX_READ and FX_WRITE (other ops: -EINVAL); @md
 * NULL is fx_io().
 */
int fx_io_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, enum fx_io_op op, void *buf,
	     void *md, uint64_t lba, uint32_t lba_count, uint32_t io_flags, struct nvme_cpl *cpl);

/* Raw I/O command, waited for as fx_io(). */
int fx_io_raw(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair,
	      const struct nvme_cmd *cmd, void *buf, uint32_t len, struct nvme_cpl *cpl);

/* ---- memory and data patterns ---- */

/* DMA memory, 4 KiB aligned, zero filled; asserts on failure. */
void *fx_dma_alloc(size_t size);

/*
 * Fill @count blocks of @block_size bytes as if they were LBAs @lba.. written with @tag:
 * every 8-byte word names (tag, lba, offset), so a block read from the wrong place or
 * written by someone else is recognised.
 */
void fx_pattern_fill(void *buf, uint64_t lba, uint32_t count, uint32_t block_size, uint32_t tag);

/*
 * Check what fx_pattern_fill() would have written. \return the index of the first bad
 * byte, or -1 if all match. Prints the first mismatch.
 */
long fx_pattern_check(const void *buf, uint64_t lba, uint32_t count, uint32_t block_size,
		      uint32_t tag);

/*
 * Separate metadata of @count blocks of @ms bytes as if they were LBAs @lba.. written with
 * @tag: each byte names its block, its place and the tag. fx_md_check() \return the index of
 * the first bad byte, or -1 if all match (the first mismatch printed).
 */
void fx_md_fill(void *md, uint64_t lba, uint32_t count, uint32_t ms, uint32_t tag);
long fx_md_check(const void *md, uint64_t lba, uint32_t count, uint32_t ms, uint32_t tag);

/* True if @len bytes at @buf are all zero. */
bool fx_is_zero(const void *buf, size_t len);

/* ---- scatter lists (readv/writev) ---- */

#define FX_SGL_MAX 1024

/*
 * A scattered payload. struct fx_cpl comes first: the same cb_arg reaches the completion
 * callback and the SGL callbacks, as in SPDK.
 */
struct fx_sgl {
	struct fx_cpl done;
	unsigned int iovcnt;
	struct {
		void *base;
		uint32_t len;
	} iov[FX_SGL_MAX];
	unsigned int cur;    /* element next_sge returns next */
	uint32_t cur_offset; /* offset inside it */
	unsigned int resets; /* reset_sgl calls seen */
	unsigned int nexts;  /* next_sge calls seen */
};

void fx_sgl_init(struct fx_sgl *sgl);
void fx_sgl_add(struct fx_sgl *sgl, void *base, uint32_t len);
uint32_t fx_sgl_total(const struct fx_sgl *sgl);
void fx_sgl_reset_cb(void *cb_arg, uint32_t offset);
int fx_sgl_next_cb(void *cb_arg, void **address, uint32_t *length);

/* Submit readv/writev over @sgl and wait; returns as fx_io(). */
int fx_iov_io(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, bool write, struct fx_sgl *sgl,
	      uint64_t lba, uint32_t lba_count, struct nvme_cpl *cpl);
/* As fx_iov_io() with separate metadata @md (see fx_io_md()); NULL: fx_iov_io(). */
int fx_iov_io_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, bool write,
		 struct fx_sgl *sgl, void *md, uint64_t lba, uint32_t lba_count,
		 struct nvme_cpl *cpl);

/* ---- the registers, read straight from the function's BAR0 (as a bus analyser) ---- */

/* Read the 32-bit register at @offset of @emu's BAR0 (mapped and unmapped around it). */
int fx_emu_read_reg32(struct nvp_emu_ctrlr *emu, uint32_t offset, uint32_t *value);

/* Read CAP (two dwords, low first). */
int fx_emu_read_cap(struct nvp_emu_ctrlr *emu, uint64_t *value);

/* ---- CUnit ---- */

struct fx_test {
	const char *name;
	CU_TestFunc fn;
};

/*
 * Initialise env, run @tests (all, or those named on the command line) in one suite,
 * and return the process exit status: 0 all passed, 1 a failure.
 */
int fx_main(int argc, char **argv, const char *suite, const struct fx_test *tests, size_t count);

/* Print a completion on stderr when it is an error (for diagnostics). */
void fx_print_cpl(const char *what, const struct nvme_cpl *cpl);

/* Assert that a completion carries (sct, sc). */
#define FX_ASSERT_STATUS(cpl, sct_, sc_)                         \
	do {                                                     \
		fx_print_cpl(#sct_ "/" #sc_ " expected", (cpl)); \
		CU_ASSERT_EQUAL((cpl)->status.sct, (sct_));      \
		CU_ASSERT_EQUAL((cpl)->status.sc, (sc_));        \
	} while (0)

#endif /* NVP_TEST_FIXTURE_H */
