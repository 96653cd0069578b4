/*
 * lazywatch.c - a store and reflector started on first need (lazywatch.h).
 */
#include "kube/lazywatch.h"

#include <string.h>

#include "base/err.h"
#include "kube/reflector.h"
#include "kube/store.h"

int lazy_watch_init(struct lazy_watch *lw, struct kube_http *http, const struct store_options *so,
		    const struct store_handlers *h, const struct reflector_options *ro)
{
	int err = CADRE_ENOMEM;

	memset(lw, 0, sizeof(*lw));
	pthread_mutex_init(&lw->lock, NULL);
	lw->store = store_new(so);
	if (lw->store && (!h || !(err = store_add_handlers(lw->store, h))) &&
	    !(err = reflector_new(http, lw->store, ro, &lw->reflector)))
		return 0;
	lazy_watch_release(lw);
	return err ? err : CADRE_ENOMEM;
}

int lazy_watch_start(struct lazy_watch *lw, bool *first)
{
	int err = 0;

	if (first)
		*first = false;
	pthread_mutex_lock(&lw->lock);
	if (!lw->started) {
		err = reflector_start(lw->reflector);
		if (!err) {
			lw->started = true;
			if (first)
				*first = true;
		}
	}
	pthread_mutex_unlock(&lw->lock);
	return err;
}

void lazy_watch_release(struct lazy_watch *lw)
{
	reflector_free(lw->reflector);
	store_free(lw->store);
	pthread_mutex_destroy(&lw->lock);
	memset(lw, 0, sizeof(*lw));
}
