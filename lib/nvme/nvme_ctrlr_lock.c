/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The admin queue's lock. The admin queue is shared by every thread; each use holds
 * ctrlr->adminq_lock for the time of one submission or one poll (a synchronous command
 * waits without it). The lock is recursive so that a callback run while completions are
 * processed (an AER handler) may itself issue admin commands. A file of its own, at the
 * bottom of lib/nvme: the admin commands take it, and so do the I/O polls that send a
 * Keep Alive or step a reconnect, which sit below the admin commands.
 */
#include <pthread.h>

#include "nvme_internal.h"

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	pthread_mutex_lock(&ctrlr->adminq_lock);
}

/* For I/O threads: never wait for the admin queue. \return true if now held. */
bool
nvme_ctrlr_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	return pthread_mutex_trylock(&ctrlr->adminq_lock) == 0;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	pthread_mutex_unlock(&ctrlr->adminq_lock);
}
