/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * The environment: DMA memory and its IOVA translation, time, and the PCI function
 * interface. Two backends implement it: env_dpdk (DPDK EAL, hugepages) and env_posix
 * (no DPDK; page-aligned anonymous memory with IOVA = virtual address, good for the
 * software controller only). Nothing else in nvpoll touches DPDK.
 *
 * PCI functions come in two kinds behind one interface: real ones (found by
 * enumeration, joined by the PCIe issue) and virtual ones registered by a device model
 * such as the software controller. A driver cannot tell them apart.
 */
#ifndef NVPOLL_ENV_H
#define NVPOLL_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Initialisation
 * ------------------------------------------------------------------------------------- */

/** Options for nvp_env_init(). Always initialise with nvp_env_opts_init(). */
struct nvp_env_opts {
	size_t opts_size;       /**< sizeof(struct nvp_env_opts) as the caller knows it */
	const char *name;       /**< program name, used for DPDK's file prefix; "nvpoll" */
	const char *core_mask;  /**< DPDK core mask, e.g. "0x1"; NULL = "0x1" */
	size_t mem_size_mb;     /**< DMA memory to reserve; 0 = backend default */
	bool no_huge;           /**< force anonymous memory even if hugepages are reserved */
	bool no_pci;            /**< do not enumerate real PCI functions */
	bool quiet;             /**< suppress the backend's informational output */
	bool no_sigbus_handler; /**< do not install the SIGBUS handler that keeps the
				 * process alive when a mapped BAR's device is removed
				 * (nvp_env_sigbus_register()); for applications that
				 * handle SIGBUS themselves */
};

/** Fill @opts with defaults; @opts_size is sizeof(*opts) at the caller. */
void nvp_env_opts_init(struct nvp_env_opts *opts, size_t opts_size);

/**
 * Initialise the environment once per process. Calling it again after success is a
 * no-op returning 0. The DPDK backend uses hugepages when reserved and mounted, else
 * falls back to anonymous memory with a one-line warning saying how to reserve them.
 *
 * \return 0, -EINVAL on bad options, -ENOMEM or -EIO if the backend failed to start
 * (message logged), -EALREADY (DPDK backend) if called again after nvp_env_fini(): the
 * EAL cannot be restarted in one process.
 */
int nvp_env_init(const struct nvp_env_opts *opts);

/** True once nvp_env_init() succeeded. */
bool nvp_env_is_initialized(void);

/**
 * Release the environment (for tests and clean shutdown). Virtual devices still running
 * (the software controller's threads) are stopped first, so none touches DMA memory after
 * it is freed, even in a process that exits with I/O outstanding; their objects stay for
 * their own destroy calls.
 */
void nvp_env_fini(void);

/**
 * Keep the process alive if @addr..@addr+@len (a BAR mapping) faults with SIGBUS because
 * its device went away: the handler (installed at the first call, chaining to the one
 * before it for other addresses) maps anonymous memory filled with ones over the range,
 * so the access reads all ones and the driver sees a removed device. env's own BAR
 * mappings of real functions are registered already. Async-signal-safe lookup.
 * \return 0; -EINVAL; -ENOTSUP (opts.no_sigbus_handler); -ENOSPC (64 ranges in use).
 */
int nvp_env_sigbus_register(void *addr, size_t len);
/** Forget the range at @addr (before it is unmapped). */
void nvp_env_sigbus_unregister(void *addr);
/** Ranges the handler has replaced so far. */
uint64_t nvp_env_sigbus_get_remaps(void);

/**
 * Fault injection for tests: of the calling thread's next DMA allocations
 * (nvp_env_dma_malloc/zmalloc), let @skip succeed, then fail @count (NULL, as when memory
 * runs out). Other threads are not affected. (0, 0) turns it off.
 */
void nvp_env_dma_inject_failure(uint32_t skip, uint32_t count);
/** Allocations of the calling thread failed by injection since the last inject call. */
uint32_t nvp_env_dma_get_injected_failures(void);

/** Name of the backend in this build: "dpdk" or "posix". */
const char *nvp_env_name(void);

/* ---------------------------------------------------------------------------------------
 * DMA memory
 * ------------------------------------------------------------------------------------- */

/** Returned by nvp_env_vtophys() for an address that is not DMA memory. */
#define NVP_ENV_BAD_IOVA UINT64_MAX

/**
 * Allocate @size bytes of DMA-able memory aligned to @align (a power of two; 0 means
 * 64). If @iova is not NULL, the bus address of the first byte is stored there.
 * Thread-safe; not for the I/O path.
 *
 * \return the virtual address, or NULL (out of memory, bad alignment, env not
 * initialised).
 */
void *nvp_env_dma_malloc(size_t size, size_t align, uint64_t *iova);

/** As nvp_env_dma_malloc(), zero filled. */
void *nvp_env_dma_zmalloc(size_t size, size_t align, uint64_t *iova);

/** Free memory from nvp_env_dma_malloc(); NULL is ignored. */
void nvp_env_dma_free(void *buf);

/**
 * Translate a virtual address inside DMA memory to its bus address (IOVA).
 * If @size is not NULL, on entry it holds the length the caller wants; on return it is
 * lowered to the number of bytes from @vaddr that are contiguous in IOVA space.
 * Thread-safe and lock-free enough for the I/O path.
 *
 * \return the IOVA, or NVP_ENV_BAD_IOVA if @vaddr is not DMA memory.
 */
uint64_t nvp_env_vtophys(const void *vaddr, uint64_t *size);

/*
 * The IOVA map behind nvp_env_vtophys(), for translating inline on an I/O path. A
 * two-level table: level 1, indexed by address bits 30..47, points to level-2 tables
 * indexed by bits 12..29, whose 64-bit entries hold the 4 KiB page's IOVA | 1 (0: not
 * DMA memory). Both backends fill it when DMA memory appears and clear it when it goes.
 * Tables live until nvp_env_fini() and entries are single words, so a reader needs no
 * lock: cache nvp_env_iova_map() once, then nvp_env_iova_map_translate() is two loads.
 */
#define NVP_ENV_IOVA_MAP_VA_BITS 48
#define NVP_ENV_IOVA_MAP_L1_SHIFT 30
#define NVP_ENV_IOVA_MAP_PAGE_SHIFT 12
#define NVP_ENV_IOVA_MAP_VALID 1ull

/** The level-1 table of the IOVA map (the same pointer for the life of the process). */
uint64_t *const *nvp_env_iova_map(void);

/** The IOVA of @vaddr through @map, or NVP_ENV_BAD_IOVA. No size, no contiguity. */
static inline uint64_t
nvp_env_iova_map_translate(uint64_t *const *map, const void *vaddr)
{
	uint64_t va = (uint64_t)(uintptr_t)vaddr;
	const uint64_t page_mask = (1ull << NVP_ENV_IOVA_MAP_PAGE_SHIFT) - 1;
	const uint64_t *l2;
	uint64_t e;

	if (__builtin_expect(va >> NVP_ENV_IOVA_MAP_VA_BITS, 0)) {
		return NVP_ENV_BAD_IOVA;
	}
	/* Acquire: a level-2 table is published after it was zeroed. */
	l2 = __atomic_load_n(&map[va >> NVP_ENV_IOVA_MAP_L1_SHIFT], __ATOMIC_ACQUIRE);
	if (__builtin_expect(l2 == NULL, 0)) {
		return NVP_ENV_BAD_IOVA;
	}
	e = __atomic_load_n(
		&l2[(va >> NVP_ENV_IOVA_MAP_PAGE_SHIFT) &
		    ((1ull << (NVP_ENV_IOVA_MAP_L1_SHIFT - NVP_ENV_IOVA_MAP_PAGE_SHIFT)) - 1)],
		__ATOMIC_RELAXED);
	if (__builtin_expect(!(e & NVP_ENV_IOVA_MAP_VALID), 0)) {
		return NVP_ENV_BAD_IOVA;
	}
	return (e & ~page_mask) + (va & page_mask);
}

/**
 * Translate a bus address back to a virtual address, checking that the whole range
 * [@iova, @iova + @len) is DMA memory and contiguous — what an IOMMU would check for a
 * device. Used by device models (the software controller) for every access.
 * Thread-safe.
 *
 * How far "contiguous" reaches depends on the backend: env_posix accepts a range only
 * inside one allocation (rounded up to whole pages; a guard page follows each one),
 * env_dpdk any range of DPDK memory that is contiguous (as an IOMMU mapping of the
 * hugepage heap would). nvp_env_vtophys() lowers @size by the same rule.
 *
 * \return the virtual address, or NULL if any byte of the range is not DMA memory.
 */
void *nvp_env_iova_to_vaddr(uint64_t iova, uint64_t len);

/* ---------------------------------------------------------------------------------------
 * Time
 * ------------------------------------------------------------------------------------- */

/** A monotonic tick counter (the TSC where available). Cheap; for the I/O path. */
uint64_t nvp_env_get_ticks(void);

/**
 * True if nvp_env_get_ticks() is the CPU's time-stamp counter, so that a hot path may
 * read it inline with nvp_tsc_read() (nvpoll/barrier.h) instead of calling it.
 */
bool nvp_env_get_ticks_is_tsc(void);

/** Ticks per second of nvp_env_get_ticks(). */
uint64_t nvp_env_get_ticks_hz(void);

/** Busy-wait or sleep about @us microseconds. */
void nvp_env_delay_us(uint32_t us);

/** CPU time used by the calling thread, in nanoseconds. */
uint64_t nvp_env_thread_cpu_ns(void);

/* ---------------------------------------------------------------------------------------
 * PCI functions
 * ------------------------------------------------------------------------------------- */

/** NVMe class code: mass storage (01), non-volatile memory (08), NVMe I/O (02). */
#define NVP_PCI_CLASS_NVME 0x010802u

struct nvp_pci_addr {
	uint32_t domain;
	uint8_t bus;
	uint8_t dev;
	uint8_t func;
};

/** Length of "dddd:bb:dd.f" plus NUL, with room for a wide domain. */
#define NVP_PCI_ADDR_STRLEN 24

/** Parse "0000:01:00.0", "01:00.0" or "0000.01.00.0" (fio form). \return 0 or -EINVAL. */
int nvp_pci_addr_parse(struct nvp_pci_addr *addr, const char *str);

/** Format as "dddd:bb:dd.f". \return 0 or -ENOSPC. */
int nvp_pci_addr_fmt(char *buf, size_t len, const struct nvp_pci_addr *addr);

/** Compare two addresses like memcmp. \return < 0, 0 or > 0 (no errno). */
int nvp_pci_addr_compare(const struct nvp_pci_addr *a, const struct nvp_pci_addr *b);

struct nvp_pci_id {
	uint32_t class_id; /**< 24-bit class code */
	uint16_t vendor_id;
	uint16_t device_id;
	uint16_t subvendor_id;
	uint16_t subdevice_id;
};

/** What sysfs says about a PCI function (nvp_pci_scan()). */
struct nvp_pci_info {
	struct nvp_pci_addr addr;
	char bdf[NVP_PCI_ADDR_STRLEN];
	struct nvp_pci_id id;
	char driver[32]; /**< the kernel driver bound to it; "" when none */
	int iommu_group; /**< -1 when the function has none (no IOMMU) */
	int numa_node;   /**< -1 when unknown */
};

/** Where sysfs is read: "/sys", or $NVP_SYSFS_ROOT (a fake tree, for tests). */
const char *nvp_env_sysfs_root(void);

/**
 * Call @cb for every PCI function of class @class_id (0 = any), in address order: found
 * with libpciaccess (class match, mask 0xffffff) on the real /sys, by reading the fake tree
 * when NVP_SYSFS_ROOT is set. Needs no nvp_env_init(). Stops on a non-zero return and
 * passes it back. \return 0, @cb's value; -ENOMEM; -EACCES, -EIO etc. (the errno of
 * libpciaccess or of reading sysfs) when the bus cannot be scanned.
 */
int nvp_pci_scan(uint32_t class_id, int (*cb)(void *ctx, const struct nvp_pci_info *info),
		 void *ctx);

/** True if sysfs lists at least one IOMMU group: an IOMMU is on. */
bool nvp_env_iommu_present(void);

/**
 * Is IOMMU group @group viable for vfio (every function in it bound to vfio-pci,
 * pci-stub, pcieport or nothing)? If not, a sentence for people naming the function in
 * the way and what to do goes into @why. \return 0 (viable), -EPERM (not viable),
 * -ENOENT (no such group).
 */
int nvp_env_iommu_group_viable(int group, char *why, size_t whylen);

/**
 * Why a userspace driver cannot use function @info (bound to nvme, no driver, ...), or
 * "" if it can (bound to vfio-pci or uio_pci_generic). \return 0 if usable, else -errno
 * matching the sentence (-EBUSY bound to a kernel driver, -ENODEV no driver).
 */
int nvp_pci_usable(const struct nvp_pci_info *info, char *why, size_t whylen);

struct nvp_pci_device;

/**
 * What a PCI function can do. Real functions get these from the env backend (vfio,
 * uio); virtual functions supply their own.
 */
struct nvp_pci_device_ops {
	/** Map BAR @bar; store its address and size. \return 0 or -errno. */
	int (*map_bar)(struct nvp_pci_device *dev, uint32_t bar, void **mapped_addr,
		       uint64_t *phys_addr, uint64_t *size);
	/** Undo map_bar. */
	int (*unmap_bar)(struct nvp_pci_device *dev, uint32_t bar, void *addr);
	/** Read @len bytes of configuration space at @offset. \return 0 or -errno. */
	int (*cfg_read)(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset);
	/** Write @len bytes of configuration space at @offset. \return 0 or -errno. */
	int (*cfg_write)(struct nvp_pci_device *dev, const void *value, uint32_t len,
			 uint32_t offset);
	/**
	 * Optional: enable interrupt vector @vector and give the eventfd it signals. The
	 * function may have fewer vectors than asked for: *@vector_out is the one the device
	 * must be told to use (vfio-pci MSI-X: @vector modulo the table size; uio_pci_generic:
	 * 0, the one INTx line every queue shares; virtual functions: @vector). The fd is the
	 * function's, closed when it goes away. \return the fd, or -ENOTSUP / -errno.
	 */
	int (*irq_fd)(struct nvp_pci_device *dev, uint32_t vector, uint32_t *vector_out);
	/**
	 * Optional: make @vector able to fire again before a waiter blocks on it (a level
	 * interrupt that the kernel masked when it last fired: uio_pci_generic sets INTx
	 * Disable). NULL when the vector needs nothing (eventfds, MSI-X). \return 0 or -errno.
	 */
	int (*irq_unmask)(struct nvp_pci_device *dev, uint32_t vector);
	/**
	 * Optional: true once the kernel asked for the function back (vfio-pci signals its
	 * device request interrupt when the function is being unbound, and the unbind waits
	 * until the process lets go). Cheap enough to call every few milliseconds; sticky.
	 */
	bool (*release_requested)(struct nvp_pci_device *dev);
};

/** A PCI function as env offers it. */
struct nvp_pci_device {
	struct nvp_pci_addr addr;
	struct nvp_pci_id id;
	int numa_node;   /**< -1 if unknown */
	char driver[32]; /**< kernel driver bound ("vfio-pci", "uio_pci_generic",
				    * "nvme") or "virtual" */
	bool is_virtual; /**< registered by a device model, not found on a bus */
	const struct nvp_pci_device_ops *ops;
	void *dev_ctx; /**< owner's private pointer (backend or device model) */

	/* Owned by env. */
	bool claimed;
	TAILQ_ENTRY(nvp_pci_device) link;
};

/**
 * Register a virtual PCI function (a device model such as the software controller).
 * @dev must stay valid until nvp_pci_device_unregister(). The address must be
 * unique; device models take theirs from nvp_pci_virtual_addr_alloc().
 *
 * \return 0, -EEXIST if the address is taken, -EINVAL if a field is missing.
 */
int nvp_pci_device_register(struct nvp_pci_device *dev);

/** Remove a virtual function. \return 0, -ENOENT, or -EBUSY while a driver claims it. */
int nvp_pci_device_unregister(struct nvp_pci_device *dev);

/**
 * A free address for a virtual function: domain 0x10000 and up, never on a real bus.
 * \return 0; -EINVAL @addr NULL; -ENOSPC every virtual address is taken.
 */
int nvp_pci_virtual_addr_alloc(struct nvp_pci_addr *addr);

/**
 * Call @cb for every PCI function with class @class_id (0 = any) that env knows:
 * registered virtual functions, then real NVMe functions found on the bus (unless env was
 * started with no_pci) that a userspace driver can use - bound to vfio-pci or
 * uio_pci_generic. nvp_pci_device_find() also finds the others (bound to the kernel
 * nvme driver, or to none), so that attaching to one fails with a message saying why.
 * Stops early and returns @cb's value if it returns non-zero.
 * For virtual functions @cb runs with the registry lock held; the lock is recursive, so
 * @cb may call find/claim/release/register and unregister the function it was given,
 * but must not wait for another thread that uses the registry. \return 0, @cb's value,
 * or -EINVAL if @cb is NULL.
 */
int nvp_pci_enumerate(uint32_t class_id, int (*cb)(void *ctx, struct nvp_pci_device *dev),
		      void *ctx);

/**
 * Call @cb once for every real PCI function with class @class_id (0 = any; only NVMe
 * functions are scanned) that nvp_pci_enumerate() does not offer, with a one-line
 * reason for people that ends with what to do ("bound to nvme (kernel driver): run
 * scripts/setup.sh config", "no driver bound: ...", "IOMMU group 5 is not viable: ...").
 * Functions this process has open are not reported. Nothing when env runs with no_pci.
 * \return the number of functions reported, or -EINVAL if @cb is NULL.
 */
int nvp_pci_skipped(uint32_t class_id,
		    void (*cb)(void *ctx, const struct nvp_pci_addr *addr, const char *reason),
		    void *ctx);

/** Find a function by address. \return the device or NULL. */
struct nvp_pci_device *nvp_pci_device_find(const struct nvp_pci_addr *addr);

/** Mark a function as owned by a driver. \return 0, or -EBUSY if already claimed. */
int nvp_pci_device_claim(struct nvp_pci_device *dev);

/** Give up ownership. */
void nvp_pci_device_release(struct nvp_pci_device *dev);

/**
 * The eventfd of interrupt vector @vector of @dev (see nvp_pci_device_ops.irq_fd).
 * \return the fd (>= 0), or -ENOTSUP when the function offers no interrupts.
 */
int nvp_pci_device_irq_fd(struct nvp_pci_device *dev, uint32_t vector, uint32_t *vector_out);

/**
 * Re-arm vector @vector of @dev before blocking on it (see irq_unmask). \return 0 (also
 * without the op); -EINVAL @dev NULL; the op's -errno (-EIO: config space write failed).
 */
int nvp_pci_device_irq_unmask(struct nvp_pci_device *dev, uint32_t vector);

/** True once the kernel asked for @dev back (see release_requested); false without the op. */
bool nvp_pci_device_release_requested(struct nvp_pci_device *dev);

/*
 * Config space helpers over ops->cfg_read/cfg_write. \return 0; -EINVAL NULL argument
 * or an offset not naturally aligned; -ENOTSUP the function has no such op; the op's
 * -errno (-EIO: the access failed).
 */
int nvp_pci_cfg_read16(struct nvp_pci_device *dev, uint16_t *value, uint32_t offset);
int nvp_pci_cfg_write16(struct nvp_pci_device *dev, uint16_t value, uint32_t offset);
int nvp_pci_cfg_read32(struct nvp_pci_device *dev, uint32_t *value, uint32_t offset);
int nvp_pci_cfg_write32(struct nvp_pci_device *dev, uint32_t value, uint32_t offset);

/** PCI configuration space offsets and bits used by drivers. */
#define NVP_PCI_CFG_VENDOR_ID 0x00
#define NVP_PCI_CFG_DEVICE_ID 0x02
#define NVP_PCI_CFG_COMMAND 0x04
#define NVP_PCI_CFG_STATUS 0x06
#define NVP_PCI_CFG_CLASS_REV 0x08 /**< class code in bits 31:8 */
#define NVP_PCI_CFG_BAR0 0x10
#define NVP_PCI_CFG_SUBVENDOR_ID 0x2c
#define NVP_PCI_CFG_SUBDEVICE_ID 0x2e
#define NVP_PCI_COMMAND_MEMORY (1u << 1)
#define NVP_PCI_COMMAND_MASTER (1u << 2)
#define NVP_PCI_COMMAND_INTX_DISABLE (1u << 10)

/* ---------------------------------------------------------------------------------------
 * Virtual device providers: how a transport ID string becomes a virtual PCI function
 * ------------------------------------------------------------------------------------- */

/**
 * A device model that can make virtual PCI functions on demand, named by the trtype of
 * a transport ID ("emu"). The driver asks env to create one from the transport ID's
 * name and remaining key/value options, then attaches to the returned address exactly as
 * to a real function, and asks env to destroy it when it detaches.
 */
struct nvp_env_vdev_provider {
	const char *name; /**< matched case-insensitively against the trtype */
	/**
	 * Create a device called @name (unique per provider) with options @args (a
	 * "key=value key=value" string, may be empty) and register its PCI function.
	 * On error, write a message for people into @err (NUL terminated).
	 * \return 0 and the function's address, -EEXIST if @name exists, -EINVAL for bad
	 * options, or another -errno.
	 */
	int (*create)(const char *name, const char *args, struct nvp_pci_addr *addr, char *err,
		      size_t errlen);
	/** Destroy the device behind @addr (unregisters its function). \return 0 or -errno. */
	int (*destroy)(const struct nvp_pci_addr *addr);
	/**
	 * Optional: stop every device of this provider from touching memory (end its
	 * threads), before nvp_env_fini() frees DMA memory. The devices stay; destroy still
	 * works on them afterwards.
	 */
	void (*quiesce)(void);

	/* Owned by env. */
	TAILQ_ENTRY(nvp_env_vdev_provider) link;
};

/** Register a provider; device models do this from a constructor. \return 0 or -EEXIST. */
int nvp_env_vdev_provider_register(struct nvp_env_vdev_provider *provider);

/** Look up a provider by name (case-insensitive). \return it or NULL. */
struct nvp_env_vdev_provider *nvp_env_vdev_provider_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_ENV_H */
