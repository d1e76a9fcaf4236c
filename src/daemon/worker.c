/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>

#include "log.h"
#include "util.h"
#include "worker.h"

static void task_free(struct worker_task *t) {
        if (!t)
                return;
        if (t->kind == WORKER_ARM && t->fd >= 0)
                close(t->fd); /* nobody took the trigger */
        if (t->kind == WORKER_CALL && t->arg && t->dispose)
                t->dispose(t->arg); /* nobody took it */
        free(t->path);
        free(t->file);
        free(t->value);
        free(t->pids);
        free(t);
}

struct worker {
        struct cgroup_engine *engine;
        pthread_t thread;
        bool started;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct worker_task *head, *tail; /* guarded by lock */
        bool stop;                       /* guarded by lock */
        int pipe[2];
        sd_event_source *source;
};

static void attach(struct worker *w, struct worker_task *t) {
        int first = 0;

        for (size_t i = 0; i < t->n_pids; i++) {
                int r = cgroup_job_attach(w->engine, t->path, t->pids[i]);

                if (r >= 0)
                        t->moved++;
                else if (first == 0 && r != -ESRCH)
                        first = r;
        }
        t->r = t->moved > 0 ? 0 : first ?: -ESRCH;
}

static void *worker_main(void *arg) {
        struct worker *w = arg;

        for (;;) {
                struct worker_task *t;

                pthread_mutex_lock(&w->lock);
                while (!w->head && !w->stop)
                        pthread_cond_wait(&w->cond, &w->lock);
                if (w->stop) {
                        pthread_mutex_unlock(&w->lock);
                        return NULL;
                }
                t = w->head;
                w->head = t->next;
                if (!w->head)
                        w->tail = NULL;
                pthread_mutex_unlock(&w->lock);

                t->start_usec = now_usec(CLOCK_MONOTONIC);
                if (t->kind == WORKER_RELEASE)
                        t->r = cgroup_job_release(w->engine, t->path, &t->rel);
                else if (t->kind == WORKER_CLOSE)
                        t->r = close(t->fd) < 0 ? -errno : 0;
                else if (t->kind == WORKER_ATTACH)
                        attach(w, t);
                else if (t->kind == WORKER_ARM)
                        t->r = cgroup_psi_trigger(w->engine, t->path, t->file, t->value, &t->fd);
                else if (t->kind == WORKER_CALL)
                        t->call(t->arg);
                else
                        t->r = cgroup_write_file(w->engine, t->path, t->file, t->value);
                t->end_usec = now_usec(CLOCK_MONOTONIC);
                /* A pointer: written whole.  The loop may be slow to read: block. */
                while (write(w->pipe[1], &t, sizeof(t)) < 0 && errno == EINTR)
                        ;
        }
}

static int on_result(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct worker_task *t;
        ssize_t n;

        while ((n = read(fd, &t, sizeof(t))) == (ssize_t) sizeof(t)) {
                if (t->done) {
                        t->done(t->userdata, t);
                        if (t->kind == WORKER_ARM)
                                t->fd = -1; /* the callback's */
                        t->arg = NULL;      /* likewise */
                }
                task_free(t);
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
                log_warning_errno(errno, "Reading worker results failed: %m");
        return 0;
}

int worker_new(sd_event *event, struct cgroup_engine *engine, struct worker **ret) {
        _cleanup_(worker_freep) struct worker *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->engine = engine;
        w->pipe[0] = w->pipe[1] = -1;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->cond, NULL);
        if (pipe2(w->pipe, O_CLOEXEC) < 0)
                return -errno;
        if (fcntl(w->pipe[0], F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        r = sd_event_add_io(event, &w->source, w->pipe[0], EPOLLIN, on_result, NULL);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(w->source, "worker-results");
        r = -pthread_create(&w->thread, NULL, worker_main, w);
        if (r < 0)
                return r;
        w->started = true;
        *ret = TAKE_PTR(w);
        return 0;
}

static void queue(struct worker *w, struct worker_task *t) {
        pthread_mutex_lock(&w->lock);
        if (w->tail)
                w->tail->next = t;
        else
                w->head = t;
        w->tail = t;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
}

static struct worker_task *task_new(enum worker_kind kind, worker_done_fn done, void *userdata) {
        struct worker_task *t = malloc(sizeof(*t));

        if (t)
                *t = (struct worker_task){ .kind = kind, .fd = -1, .done = done, .userdata = userdata };
        return t;
}

/* A task's path, file and value, copied; on failure the task is freed. */
static int task_strings(struct worker_task *t, const char *path, const char *file, const char *value) {
        t->path = strdup(path);
        t->file = strdup(file);
        t->value = strdup(value);
        if (!t->path || !t->file || !t->value) {
                task_free(t);
                return -ENOMEM;
        }
        return 0;
}

int worker_release(struct worker *w, uint64_t job_id, const char *path, worker_done_fn done, void *userdata) {
        struct worker_task *t = task_new(WORKER_RELEASE, done, userdata);

        if (!t)
                return -ENOMEM;
        t->job_id = job_id;
        t->path = strdup(path);
        if (!t->path) {
                task_free(t);
                return -ENOMEM;
        }
        queue(w, t);
        return 0;
}

int worker_write(struct worker *w, const char *path, const char *file, const char *value, uint64_t wake_usec,
                 worker_done_fn done, void *userdata) {
        struct worker_task *t = task_new(WORKER_WRITE, done, userdata);

        if (!t)
                return -ENOMEM;
        t->wake_usec = wake_usec;
        if (task_strings(t, path, file, value) < 0)
                return -ENOMEM;
        queue(w, t);
        return 0;
}

int worker_attach(struct worker *w, const char *path, const pid_t *pids, size_t n, worker_done_fn done,
                  void *userdata) {
        struct worker_task *t = task_new(WORKER_ATTACH, done, userdata);

        assert(n > 0);
        if (!t)
                return -ENOMEM;
        t->path = strdup(path);
        t->pids = calloc(n, sizeof(*pids));
        if (t->pids)
                memcpy(t->pids, pids, n * sizeof(*pids));
        t->n_pids = n;
        if (!t->path || !t->pids) {
                task_free(t);
                return -ENOMEM;
        }
        queue(w, t);
        return 0;
}

int worker_arm(struct worker *w, const char *path, const char *resource, const char *spec, uint64_t token,
               worker_done_fn done, void *userdata) {
        struct worker_task *t = task_new(WORKER_ARM, done, userdata);

        if (!t)
                return -ENOMEM;
        t->token = token;
        if (task_strings(t, path, resource, spec) < 0)
                return -ENOMEM;
        queue(w, t);
        return 0;
}

int worker_call(struct worker *w, void (*call)(void *arg), void *arg, void (*dispose)(void *arg), worker_done_fn done,
                void *userdata) {
        struct worker_task *t = task_new(WORKER_CALL, done, userdata);

        assert(call && done);
        if (!t)
                return -ENOMEM;
        t->call = call;
        t->arg = arg;
        t->dispose = dispose;
        queue(w, t);
        return 0;
}

int worker_close(struct worker *w, int fd, worker_done_fn done, void *userdata) {
        struct worker_task *t = task_new(WORKER_CLOSE, done, userdata);

        if (!t) {
                close(fd);
                return -ENOMEM;
        }
        t->fd = fd;
        queue(w, t);
        return 0;
}

struct worker *worker_free(struct worker *w) {
        if (!w)
                return NULL;
        if (w->started) {
                pthread_mutex_lock(&w->lock);
                w->stop = true;
                pthread_cond_signal(&w->cond);
                pthread_mutex_unlock(&w->lock);
                pthread_join(w->thread, NULL);
        }
        while (w->head) {
                struct worker_task *t = w->head;

                w->head = t->next;
                task_free(t);
        }
        /* Done, but the loop stopped before it read them: their outcome is moot now. */
        for (struct worker_task *t; w->pipe[0] >= 0 && read(w->pipe[0], &t, sizeof(t)) == (ssize_t) sizeof(t);)
                task_free(t);
        sd_event_source_disable_unref(w->source);
        closep(&w->pipe[0]);
        closep(&w->pipe[1]);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->cond);
        free(w);
        return NULL;
}
