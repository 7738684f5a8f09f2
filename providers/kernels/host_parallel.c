#include "host_parallel.h"

#include <pthread.h>
#include <stdlib.h>

/* The kernels ask for at most as many shares as the launch's threads, so
 * one thread per share. */
typedef struct share {
    pthread_t thread;
    int started;
    void (*body)(void *arg, int64_t i);
    void *arg;
    int64_t index;
} share_t;

static void *run_share(void *p)
{
    share_t *s = p;
    s->body(s->arg, s->index);
    return NULL;
}

void host_parallel_for(void *ctx, int64_t n, void (*body)(void *arg, int64_t i), void *arg)
{
    (void)ctx;
    share_t *shares = n > 1 ? calloc((size_t)n, sizeof *shares) : NULL;
    if (!shares) {
        for (int64_t i = 0; i < n; i++)
            body(arg, i);
        return;
    }
    for (int64_t i = 1; i < n; i++) {
        shares[i] = (share_t){.body = body, .arg = arg, .index = i};
        shares[i].started = pthread_create(&shares[i].thread, NULL, run_share,
                                           &shares[i]) == 0;
    }
    body(arg, 0);
    for (int64_t i = 1; i < n; i++) {
        if (shares[i].started)
            pthread_join(shares[i].thread, NULL);
        else
            body(arg, i);
    }
    free(shares);
}
