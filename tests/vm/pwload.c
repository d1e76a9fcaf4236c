/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pwload: load generator for the VM scenarios (busybox has no O_DIRECT dd).
 *
 *   pwload write-direct FILE MIB   write MIB MiB with O_DIRECT, print the rate
 *   pwload write FILE MIB          write through the page cache (no fsync)
 *   pwload read FILE               read through the page cache, print the rate
 *   pwload as-user UID[:GID] CMD... run CMD as UID (gid GID or UID, no groups)
 *   pwload sock PATH TEXT|-SIZE    send TEXT (or SIZE bytes of 'x', no newline) on a
 *                                  Unix stream socket, print the reply
 *   pwload rtt PATH TEXT N         N times: connect, send TEXT, read the reply to its end; print each
 *                                  round trip in microseconds, a line each (the daemon's answer
 *                                  alone, without the exec and start of a client)
 *   pwload stall PATH SECONDS      connect and send nothing for SECONDS
 *   pwload escape FILE             write 4 KiB at a time until this process is in a pagewarden job;
 *                                  print "escaped=BYTES usec=T" (what it wrote before being placed)
 *   pwload hold PATH N SECONDS     connect N times and hold every connection idle for SECONDS
 *   pwload churn MIB               write every page of MIB MiB of anonymous memory, forever
 *   pwload index MIB               fill MIB MiB of anonymous memory, then write a random page of it
 *                                  every 200 us, forever (a backup tool's deduplication index)
 *   pwload sleep SECONDS           sleep, fractions too (a program of its own, unlike busybox's applets)
 *   pwload execloop RATE SECONDS PROGRAM [ARG...]
 *                                  fork and exec PROGRAM RATE times a second for SECONDS; print
 *                                  "execs=N seconds=S cpu_us=C" (the loop's CPU and its children's);
 *                                  PROGRAM "-": fork and exit, without an exec (the cheapest event)
 *   pwload watch PID SECONDS        sample every thread of PID every 10 ms for SECONDS: print, per
 *                                  thread, how often it was running or runnable (R), asleep (S), in
 *                                  an uninterruptible wait (D, with the kernel function: /proc's
 *                                  stack), and its CPU time; for where a daemon's time goes
 *   pwload tree-write DIR MIB KIB  write MIB MiB as files of KIB KiB each (DIR/NNN/NNNNN), through the
 *                                  page cache, each file opened and closed on its own (a tree of small
 *                                  files: where nocache, which drops a file's pages at close, can work)
 *   pwload tree-read DIR           read every file tree-write wrote under DIR, one after another
 *   pwload lock FILE               keep FILE's pages locked in memory until killed ("locked" once
 *                                  they are): what the host's proactive reclaim may not evict
 *   pwload resident FILE           print "resident_kib=R size_kib=S": FILE's pages in the page cache
 *                                  (mincore), whoever they are charged to
 *   pwload sample MS FILE...       every MS milliseconds until killed: "T EPOCH" (seconds, to the
 *                                  microsecond), then every line of each FILE that can be read, as
 *                                  "FILE:LINE" (grep -H's form): a trace of /proc and cgroup counters
 *                                  at the cost of a few system calls, not a fork per sample
 *   pwload rename COUNT             rename this process (PR_SET_NAME) COUNT times: a proc connector
 *                                  event each, with no fork, so a flood at system-call speed;
 *                                  print "renames=N seconds=S"
 *
 * Prints "bytes=N seconds=S mib_per_s=R" on stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1024 * 1024)

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int report(long long bytes, double start) {
        double secs = now() - start;

        printf("bytes=%lld seconds=%.3f mib_per_s=%.2f\n", bytes, secs,
               (double) bytes / CHUNK / (secs > 0 ? secs : 1e-9));
        return 0;
}

static int unix_connect(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);

        strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                perror(path);
                exit(1);
        }
        return fd;
}

/* A steady stream of execs, for the cost of watching them. */
static int execloop_cmd(int argc, char *argv[]) {
        double rate = atof(argv[2]), seconds = atof(argv[3]), start = now(), next = start;
        struct rusage self, children;
        long execs = 0;

        while (now() - start < seconds) {
                pid_t pid = fork();

                if (pid == 0) {
                        if (strcmp(argv[4], "-") != 0)
                                execv(argv[4], argv + 4);
                        _exit(127);
                }
                if (pid > 0) {
                        waitpid(pid, NULL, 0);
                        execs++;
                }
                next += 1.0 / rate;
                while (now() < next)
                        usleep((useconds_t) ((next - now()) * 1e6));
        }
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &children);
        printf("execs=%ld seconds=%.3f cpu_us=%.0f\n", execs, now() - start,
               (self.ru_utime.tv_sec + self.ru_stime.tv_sec + children.ru_utime.tv_sec + children.ru_stime.tv_sec) *
                               1e6 +
                       (self.ru_utime.tv_usec + self.ru_stime.tv_usec + children.ru_utime.tv_usec +
                        children.ru_stime.tv_usec));
        return 0;
}

/* In a job: the cgroup line names the job tree (pagewarden.slice by default). */
static int in_job(void) {
        char line[512];
        FILE *f = fopen("/proc/self/cgroup", "re");
        int r = 0;

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "0::", 3) == 0 && strstr(line, "pagewarden"))
                        r = 1;
        fclose(f);
        return r;
}

/* What a matched program does before the daemon has placed it: write as fast as it can. */
static int escape_cmd(const char *file) {
        static char page[4096];
        double start = now();
        long long written = 0;
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        if (fd < 0) {
                perror(file);
                return 1;
        }
        memset(page, 0x5a, sizeof(page));
        while (!in_job()) {
                if (write(fd, page, sizeof(page)) != (ssize_t) sizeof(page)) {
                        perror("write");
                        return 1;
                }
                written += (long long) sizeof(page);
                if (now() - start > 10) {
                        printf("escaped=%lld usec=never\n", written);
                        return 1;
                }
        }
        printf("escaped=%lld usec=%.0f\n", written, (now() - start) * 1e6);
        close(fd);
        return 0;
}

static int sock_cmd(int argc, char *argv[]) {
        int fd = unix_connect(argv[2]);
        char reply[65536];
        size_t len, got = 0;
        char *text, *allocated = NULL;
        ssize_t n;

        if (argv[3][0] == '-') {
                len = (size_t) atol(argv[3] + 1);
                text = allocated = malloc(len);
                if (!text)
                        return 1;
                memset(text, 'x', len);
        } else {
                text = argv[3];
                len = strlen(text);
        }
        /* The daemon may answer (and close) before taking everything: ignore EPIPE. */
        signal(SIGPIPE, SIG_IGN);
        for (size_t off = 0; off < len;) {
                n = write(fd, text + off, len - off);
                if (n <= 0)
                        break;
                off += (size_t) n;
        }
        while (got < sizeof(reply) - 1 && (n = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0)
                got += (size_t) n;
        reply[got] = '\0';
        fputs(reply, stdout);
        free(allocated);
        return got > 0 ? 0 : 1;
}

static int rtt_cmd(int argc, char *argv[]) {
        int n = atoi(argv[4]), failed = 0;
        size_t len = strlen(argv[3]);

        signal(SIGPIPE, SIG_IGN);
        for (int i = 0; i < n; i++) {
                double t0 = now();
                int fd = unix_connect(argv[2]);
                char reply[65536];
                size_t got = 0;
                ssize_t k;

                if (fd < 0 || write(fd, argv[3], len) != (ssize_t) len) {
                        failed++;
                        if (fd >= 0)
                                close(fd);
                        continue;
                }
                while (got < sizeof(reply) && (k = read(fd, reply, sizeof(reply))) > 0)
                        got += (size_t) k;
                close(fd);
                if (got == 0)
                        failed++;
                else
                        printf("%.0f\n", (now() - t0) * 1e6);
        }
        fflush(stdout);
        return failed > 0;
}

/* Where a process's threads spend their time: state samples (and the kernel function of D waits). */
struct watch_row {
        char key[400];
        long n;
};

static void watch_count(struct watch_row *rows, int *n_rows, int max, const char *key) {
        for (int i = 0; i < *n_rows; i++)
                if (strcmp(rows[i].key, key) == 0) {
                        rows[i].n++;
                        return;
                }
        if (*n_rows < max) {
                snprintf(rows[*n_rows].key, sizeof(rows[*n_rows].key), "%s", key);
                rows[(*n_rows)++].n = 1;
        }
}

static int watch_cmd(int argc, char *argv[]) {
        struct watch_row rows[256];
        int n_rows = 0;
        long samples = 0;
        double start = now(), seconds = atof(argv[3]);
        char dir[64];

        snprintf(dir, sizeof(dir), "/proc/%s/task", argv[2]);
        while (now() - start < seconds) {
                DIR *d = opendir(dir);
                struct dirent *e;

                if (!d)
                        break;
                while ((e = readdir(d))) {
                        char path[384], buf[1024], key[400], state = '?', fn[96] = "";
                        FILE *f;

                        if (e->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof(path), "%s/%s/stat", dir, e->d_name);
                        f = fopen(path, "re");
                        if (f && fgets(buf, sizeof(buf), f)) {
                                char *p = strrchr(buf, ')');
                                if (p && p[1] == ' ')
                                        state = p[2];
                        }
                        if (f)
                                fclose(f);
                        if (state == 'D') {
                                /* The first frame that is not the scheduler's own. */
                                snprintf(path, sizeof(path), "%s/%s/stack", dir, e->d_name);
                                f = fopen(path, "re");
                                while (f && fgets(buf, sizeof(buf), f)) {
                                        char *b = strchr(buf, ']');
                                        if (!b || strstr(b, "schedule") || strstr(b, "wait_for_completion"))
                                                continue;
                                        sscanf(b + 1, " %95[^+ \n]", fn);
                                        break;
                                }
                                if (f)
                                        fclose(f);
                        }
                        snprintf(key, sizeof(key), "tid %s %c %s", e->d_name, state, fn);
                        watch_count(rows, &n_rows, 256, key);
                }
                closedir(d);
                samples++;
                usleep(10000);
        }
        for (int i = 0; i < n_rows; i++)
                printf("%s: %ld of %ld samples\n", rows[i].key, rows[i].n, samples);
        return 0;
}

/* tree-write and tree-read: DIR/NNN/NNNNN, 1000 files a directory. */
static int tree_cmd(bool write_it, const char *dir, long mib, long kib, void *chunk) {
        long long total = 0;
        double start = now();
        long files = write_it ? mib * 1024 / (kib > 0 ? kib : 1) : LONG_MAX;
        char path[PATH_MAX];

        if (write_it && mkdir(dir, 0755) < 0 && errno != EEXIST) {
                perror(dir);
                return 1;
        }
        for (long i = 0; i < files; i++) {
                int fd;

                if (i % 1000 == 0) {
                        snprintf(path, sizeof(path), "%s/%03ld", dir, i / 1000);
                        if (write_it && mkdir(path, 0755) < 0 && errno != EEXIST) {
                                perror(path);
                                return 1;
                        }
                }
                snprintf(path, sizeof(path), "%s/%03ld/%05ld", dir, i / 1000, i);
                fd = open(path, write_it ? O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0644);
                if (fd < 0) {
                        if (!write_it && errno == ENOENT)
                                break; /* the end of the tree */
                        perror(path);
                        return 1;
                }
                if (write_it) {
                        if (write(fd, chunk, (size_t) kib * 1024) != kib * 1024) {
                                perror("write");
                                close(fd);
                                return 1;
                        }
                        total += kib * 1024;
                } else {
                        ssize_t n;

                        while ((n = read(fd, chunk, CHUNK)) > 0)
                                total += n;
                        if (n < 0) {
                                perror("read");
                                close(fd);
                                return 1;
                        }
                }
                if (close(fd) < 0) {
                        perror("close");
                        return 1;
                }
        }
        return report(total, start);
}

static int sample_cmd(int argc, char *argv[]) {
        long ms = atol(argv[2]);
        struct timespec every = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
        char line[4096];

        if (ms <= 0) {
                fprintf(stderr, "sample: MS must be a positive number of milliseconds\n");
                return 2;
        }
        for (;;) {
                struct timespec t;

                clock_gettime(CLOCK_REALTIME, &t);
                printf("T %lld.%06ld\n", (long long) t.tv_sec, t.tv_nsec / 1000);
                for (int i = 3; i < argc; i++) {
                        FILE *f = fopen(argv[i], "re");

                        if (!f)
                                continue; /* not there (yet, or any more) */
                        while (fgets(line, sizeof(line), f))
                                printf("%s:%s%s", argv[i], line, strchr(line, '\n') ? "" : "\n");
                        fclose(f);
                }
                if (fflush(stdout) != 0)
                        return 1;
                nanosleep(&every, NULL);
        }
}

static int resident_cmd(const char *file) {
        struct stat st;
        size_t pages, resident = 0;
        unsigned char *vec;
        void *map;
        int fd = open(file, O_RDONLY | O_CLOEXEC);

        if (fd < 0 || fstat(fd, &st) < 0) {
                perror(file);
                return 1;
        }
        pages = ((size_t) st.st_size + 4095) / 4096;
        if (pages == 0) {
                close(fd);
                printf("resident_kib=0 size_kib=0\n");
                return 0;
        }
        map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        vec = malloc(pages);
        if (map == MAP_FAILED || !vec || mincore(map, (size_t) st.st_size, vec) < 0) {
                perror("mincore");
                free(vec);
                return 1;
        }
        for (size_t i = 0; i < pages; i++)
                resident += vec[i] & 1;
        printf("resident_kib=%zu size_kib=%zu\n", resident * 4, pages * 4);
        free(vec);
        munmap(map, (size_t) st.st_size);
        return 0;
}

/* The I/O buffer lives as long as the process: a global, so that LeakSanitizer sees it reachable. */
static void *buf;

/* lock FILE: its pages locked in memory until a signal ends it ("locked" on stdout once they are): a host's
 * proactive reclaim (DAMON's pageout, on some machines that run the tests) evicts page cache it finds cold,
 * whatever memory is free. */
static int lock_cmd(const char *path) {
        struct stat st;
        void *p;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0 || fstat(fd, &st) < 0) {
                perror(path);
                return 1;
        }
        p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED || mlock(p, (size_t) st.st_size) < 0) {
                perror("lock");
                return 1;
        }
        printf("locked\n");
        fflush(stdout);
        pause();
        return 0;
}

int main(int argc, char *argv[]) {
        long long total = 0;
        double start;
        int fd;

        if (argc < 3) {
                fprintf(stderr, "usage: pwload write-direct|write FILE MIB | read FILE\n");
                return 2;
        }
        if (strcmp(argv[1], "as-user") == 0) {
                const char *colon = strchr(argv[2], ':');
                gid_t g = (gid_t) atoi(colon ? colon + 1 : argv[2]);

                if (setgroups(0, NULL) < 0 || setgid(g) < 0 || setuid((uid_t) atoi(argv[2])) < 0) {
                        perror("as-user");
                        return 1;
                }
                execvp(argv[3], argv + 3);
                perror(argv[3]);
                return 127;
        }
        if (strcmp(argv[1], "watch") == 0 && argc >= 4)
                return watch_cmd(argc, argv);
        if (strcmp(argv[1], "rtt") == 0 && argc >= 5)
                return rtt_cmd(argc, argv);
        if (strcmp(argv[1], "sock") == 0 && argc >= 4)
                return sock_cmd(argc, argv);
        if (strcmp(argv[1], "execloop") == 0 && argc >= 5)
                return execloop_cmd(argc, argv);
        if (strcmp(argv[1], "rename") == 0) {
                double t0 = now();
                long n = atol(argv[2]), i;

                for (i = 0; i < n; i++)
                        if (prctl(PR_SET_NAME, (i & 1) ? "pwload-a" : "pwload-b") < 0) {
                                perror("prctl");
                                return 1;
                        }
                printf("renames=%ld seconds=%.3f\n", i, now() - t0);
                return 0;
        }
        if (strcmp(argv[1], "sleep") == 0) {
                double secs = atof(argv[2]);
                struct timespec ts = { .tv_sec = (time_t) secs, .tv_nsec = (long) ((secs - (time_t) secs) * 1e9) };

                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
                return 0;
        }
        if (strcmp(argv[1], "resident") == 0)
                return resident_cmd(argv[2]);
        if (strcmp(argv[1], "lock") == 0)
                return lock_cmd(argv[2]);
        if (strcmp(argv[1], "sample") == 0)
                return sample_cmd(argc, argv);
        if (strcmp(argv[1], "escape") == 0)
                return escape_cmd(argv[2]);
        if (strcmp(argv[1], "churn") == 0) {
                /* Writes every page of MIB MiB of anonymous memory, over and over: in a cgroup whose
                 * memory.high is below MIB, the task spends its life reclaiming and swapping. */
                size_t size = (size_t) atoi(argv[2]) * CHUNK;
                char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED) {
                        perror("mmap");
                        return 1;
                }
                for (unsigned char v = 1;; v++)
                        for (size_t off = 0; off < size; off += 4096)
                                p[off] = (char) v;
        }
        if (strcmp(argv[1], "index") == 0) {
                size_t pages = (size_t) atoi(argv[2]) * (CHUNK / 4096);
                char *p = pages ? mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                : MAP_FAILED;
                unsigned long seed = 42;

                if (p == MAP_FAILED) {
                        perror("mmap");
                        return 1;
                }
                for (size_t i = 0; i < pages; i++)
                        p[i * 4096] = 1;
                for (;;) {
                        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
                        p[((seed >> 17) % pages) * 4096 + (seed & 4095)]++;
                        nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
                }
        }
        if (strcmp(argv[1], "hold") == 0 && argc >= 5) {
                for (int i = 0; i < atoi(argv[3]); i++)
                        (void) unix_connect(argv[2]);
                printf("holding %s connections\n", argv[3]);
                fflush(stdout);
                sleep((unsigned) atoi(argv[4]));
                return 0;
        }
        if (strcmp(argv[1], "stall") == 0) {
                int sfd = unix_connect(argv[2]);
                char c;

                sleep((unsigned) atoi(argv[3]));
                /* Dropped by the daemon meanwhile: read sees EOF. */
                printf("%s\n", read(sfd, &c, 1) == 0 ? "closed" : "open");
                return 0;
        }
        if (posix_memalign(&buf, 4096, CHUNK) != 0)
                return 1;
        memset(buf, 0x5a, CHUNK);
        if (strcmp(argv[1], "tree-write") == 0 && argc >= 5)
                return tree_cmd(true, argv[2], atol(argv[3]), atol(argv[4]), buf);
        if (strcmp(argv[1], "tree-read") == 0)
                return tree_cmd(false, argv[2], 0, 0, buf);
        if (strcmp(argv[1], "read") == 0) {
                ssize_t n;

                fd = open(argv[2], O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        perror(argv[2]);
                        return 1;
                }
                start = now();
                while ((n = read(fd, buf, CHUNK)) > 0)
                        total += n;
                if (n < 0) {
                        perror("read");
                        return 1;
                }
                return report(total, start);
        }
        if (argc < 4)
                return 2;
        fd = open(argv[2],
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (strcmp(argv[1], "write-direct") == 0 ? O_DIRECT : 0),
                  0644);
        if (fd < 0) {
                perror(argv[2]);
                return 1;
        }
        start = now();
        for (long i = 0; i < atol(argv[3]); i++) {
                if (write(fd, buf, CHUNK) != CHUNK) {
                        perror("write");
                        return 1;
                }
                total += CHUNK;
        }
        report(total, start);
        return close(fd) < 0 ? 1 : 0;
}
