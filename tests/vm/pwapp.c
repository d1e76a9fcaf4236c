/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pwapp: the "application" of the governor scenario.  It keeps a working set
 * of anonymous memory and of file data read through the page cache, touches
 * both at random with low locality (one access every few milliseconds: the
 * "now and then" pattern whose pages the LRU gives away), and reports how
 * many operations it completed each second, and what each one cost.
 *
 *   pwapp ANON_MIB FILE MODEFILE
 *
 * FILE is read PWAPP_PASSES times at start (1 to 4, default 2): its pages
 * are then charged to this cgroup; read twice or more they are on the
 * kernel's active list, as a server's data is after a day's work, read
 * once on the inactive one, beside anything else read once (the pages an
 * LRU gives away first: what the observation scenario needs).
 * MODEFILE holds "MODE" or "MODE PHASE"; it is read every 100 ms.  MODE is
 * "busy", "light", "idle" or "stop".  Light: the same accesses 25 times less
 * often (one every 50 ms), the rarely but regularly used buffers whose pages
 * an LRU gives away.  PHASE is a label of at most 31 characters [a-z0-9_-]
 * ("-" without one, or with an invalid one) under which the operations are
 * counted, so that a scenario can write "light before", "light during",
 * "light after" and get each part's figures; the first 16 labels are kept,
 * later ones are counted in the 16th.
 *
 * An operation is one anonymous-page touch and one 64-byte read of a file
 * page, timed with CLOCK_MONOTONIC (the pause between operations is not part
 * of it).  With PWAPP_LOG=PATH it also appends 4 KiB to that file and
 * fdatasync()s it, as a database writes its log (the file is created, and
 * written again from its start past 64 MiB).  The read first tries preadv2(RWF_NOWAIT), which fails with EAGAIN
 * when the page is not in the page cache: that is a cache miss, counted
 * exactly, and the ordinary read that follows is part of the operation's
 * time.  (EAGAIN also comes for a cached page that carries the mark of a
 * readahead still to start, the first time it is read: mincore() on a
 * mapping of the file tells the two apart.)  Where RWF_NOWAIT is not supported pwapp says so on stderr and
 * reports misses=-1.
 *
 * Each second pwapp prints on stdout
 *
 *   t=SECONDS mode=MODE ops=N misses=N majflt=N p99_us=X
 *
 * that second's operations, cache misses, major faults of the process
 * (getrusage) and 99th-percentile operation time ("-" without operations).
 * On "stop", or SIGTERM, it prints one line per phase, in the order they
 * first appeared, and exits 0:
 *
 *   phase=NAME ops=N p50_us=X p99_us=Y p999_us=Z max_us=M misses=K majflt=F
 *         windows=W rate_p1=R rate_mean=A
 *
 * (on one line; percentiles, maximum in µs: "-" for a phase without
 * operations).  The rates are of the 100 ms windows between two reads of
 * MODEFILE in which the application was busy or light: operations per
 * second in each window, W of them in the phase, their 1st percentile (the
 * worst 1% of the phase's time, from 100 or more samples once a phase lasts
 * 10 s) and their mean ("-" without windows).  A window belongs to the
 * phase read at its start; the last, cut short by SIGTERM, is not counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define PAUSE_NS 2000000 /* one access every 2 ms, plus the access itself */

/*
 * Operation times in ns, in a log-linear histogram (as HDR histograms do):
 * below 64 ns one bucket per ns, then each power of two split into 32 equal
 * buckets, so that a bucket is at most 1/32 of its lower bound wide, up to
 * 2^34 ns (17 s).  A fixed array: recording an operation allocates nothing.
 */
#define HIST_SUB_BITS 5
#define HIST_SUB (1 << HIST_SUB_BITS)
#define HIST_LINEAR (2 * HIST_SUB)
#define HIST_MAX_EXP 34
#define HIST_BUCKETS (HIST_LINEAR + (HIST_MAX_EXP - HIST_SUB_BITS - 1) * HIST_SUB)

struct hist {
        uint64_t count[HIST_BUCKETS];
        uint64_t n, max_ns;
};

static unsigned hist_index(uint64_t ns) {
        if (ns < HIST_LINEAR)
                return (unsigned) ns;
        if (ns >= UINT64_C(1) << HIST_MAX_EXP)
                return HIST_BUCKETS - 1;
        unsigned e = 63 - (unsigned) __builtin_clzll(ns);

        return HIST_LINEAR + (e - HIST_SUB_BITS - 1) * HIST_SUB + (unsigned) ((ns >> (e - HIST_SUB_BITS)) % HIST_SUB);
}

/* The largest value bucket I holds; the last one holds all beyond too. */
static uint64_t hist_upper(unsigned i) {
        if (i < HIST_LINEAR)
                return i;
        if (i == HIST_BUCKETS - 1)
                return UINT64_MAX;
        unsigned e = (i - HIST_LINEAR) / HIST_SUB + HIST_SUB_BITS + 1, sub = (i - HIST_LINEAR) % HIST_SUB;

        return (UINT64_C(1) << e) + (uint64_t) (sub + 1) * (UINT64_C(1) << (e - HIST_SUB_BITS)) - 1;
}

static void hist_add(struct hist *h, uint64_t ns) {
        h->count[hist_index(ns)]++;
        h->n++;
        if (ns > h->max_ns)
                h->max_ns = ns;
}

/* Prints V ns as whole µs, rounded up: a figure never below the time it stands for. */
static const char *us(char *s, size_t len, uint64_t v) {
        snprintf(s, len, "%llu", (unsigned long long) ((v + 999) / 1000));
        return s;
}

/*
 * The PERMILLE-th permille of H, in µs, or "-" without values: the upper
 * bound of the bucket it falls in, but not beyond the largest value seen,
 * which is known exactly (so that p50 <= p99 <= p999 <= max always holds).
 */
static const char *hist_quantile(char *s, size_t len, const struct hist *h, unsigned permille) {
        uint64_t rank = (h->n * permille + 999) / 1000, seen = 0;

        if (h->n == 0)
                return "-";
        if (rank == 0)
                rank = 1;
        for (unsigned i = 0; i < HIST_BUCKETS; i++) {
                seen += h->count[i];
                if (seen >= rank) {
                        uint64_t v = hist_upper(i);

                        return us(s, len, v < h->max_ns ? v : h->max_ns);
                }
        }
        return us(s, len, h->max_ns);
}

#define MAX_PHASES 16
#define LABEL_LEN 32

struct phase {
        char name[LABEL_LEN];
        struct hist lat;
        uint64_t misses;
        long majflt;
        float *rates; /* operations per second of each 100 ms window */
        size_t n_rates, n_alloc;
        bool rates_lost; /* out of memory: the windows after are not counted */
};

/* Static: 16 histograms of 7.5 KiB would crowd the stack. */
static struct phase phases[MAX_PHASES];
static unsigned nphases;
static struct hist second;
static bool nowait = true;      /* RWF_NOWAIT works: misses are counted */
static unsigned char *file_map; /* the file, mapped (never touched): for mincore() */
static volatile sig_atomic_t terminated;

static void on_sigterm(int sig) {
        terminated = 1;
}

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static long majflt(void) {
        struct rusage ru;

        return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_majflt : 0;
}

static bool valid_label(const char *s, size_t len) {
        if (len == 0 || len >= LABEL_LEN)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

/*
 * Reads MODEFILE's "MODE [PHASE]" into MODE and LABEL.  A missing or empty
 * file changes neither: whoever writes it truncates it first, and a read in
 * between must not switch the application to idle, nor to phase "-".
 */
static void read_mode(const char *path, char *mode, size_t mode_len, char label[LABEL_LEN]) {
        static char complained[128];
        char line[128];
        FILE *f = fopen(path, "re");
        bool got;

        if (!f)
                return;
        got = fgets(line, sizeof(line), f) != NULL;
        fclose(f);
        if (!got)
                return;
        line[strcspn(line, "\n")] = '\0';

        /* As before phases: MODE is the line's first 15 characters at most. */
        size_t n = strcspn(line, " \t");
        const char *p = line + n + strspn(line + n, " \t");
        size_t m = strcspn(p, " \t");
        const char *rest = p + m + strspn(p + m, " \t");

        memcpy(mode, line, n < mode_len ? n : mode_len - 1);
        mode[n < mode_len ? n : mode_len - 1] = '\0';
        if (m == 0) {
                strcpy(label, "-");
        } else if (valid_label(p, m) && *rest == '\0') {
                memcpy(label, p, m);
                label[m] = '\0';
                complained[0] = '\0';
        } else {
                /* Once per content of the file, not every 100 ms. */
                if (strcmp(line, complained) != 0)
                        fprintf(stderr,
                                "pwapp: %s: \"%s\": a phase is at most %d characters [a-z0-9_-]; counted as \"-\"\n",
                                path, line, LABEL_LEN - 1);
                snprintf(complained, sizeof(complained), "%s", line);
                strcpy(label, "-");
        }
}

/* The phase named LABEL, a new one if there is room, else the last one. */
static struct phase *phase_of(const char *label) {
        for (unsigned i = 0; i < nphases; i++)
                if (strcmp(phases[i].name, label) == 0)
                        return &phases[i];
        if (nphases == MAX_PHASES) {
                fprintf(stderr, "pwapp: more than %d phases: \"%s\" is counted in \"%s\"\n", MAX_PHASES, label,
                        phases[MAX_PHASES - 1].name);
                return &phases[MAX_PHASES - 1];
        }
        snprintf(phases[nphases].name, LABEL_LEN, "%s", label);
        return &phases[nphases++];
}

/*
 * Reads LEN bytes at OFF, setting *MISS when the page was not in the page
 * cache.  RWF_NOWAIT reads only from the cache and fails with EAGAIN rather
 * than wait for the disk: an exact miss count, where the process's own major
 * faults would not see reads at all.
 */
static ssize_t read_file(int fd, void *buf, size_t len, off_t off, bool *miss) {
        if (nowait) {
                struct iovec iov = { .iov_base = buf, .iov_len = len };
                ssize_t r = preadv2(fd, &iov, 1, off, RWF_NOWAIT);
                unsigned char resident = 0;

                if (r >= 0)
                        return r;
                if (errno == EAGAIN) {
                        /* Not cached, or cached with a readahead mark (RWF_NOWAIT does no I/O, and starting the
                         * readahead is I/O): only the first is a miss. */
                        if (!file_map || mincore(file_map + (off & ~(off_t) (PAGE - 1)), PAGE, &resident) < 0)
                                resident = 0;
                        *miss = !(resident & 1);
                } else if (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS) {
                        fprintf(stderr,
                                "pwapp: preadv2 with RWF_NOWAIT: %s; cache misses are not counted (misses=-1)\n",
                                strerror(errno));
                        nowait = false;
                } else
                        return -1;
        }
        return pread(fd, buf, len, off);
}

static void add_rate(struct phase *p, float rate) {
        if (p->rates_lost)
                return;
        if (p->n_rates == p->n_alloc) {
                size_t n = p->n_alloc ? 2 * p->n_alloc : 1024;
                float *r = realloc(p->rates, n * sizeof(*r));

                if (!r) {
                        fprintf(stderr, "pwapp: out of memory: phase %s's later windows are not counted\n", p->name);
                        p->rates_lost = true;
                        return;
                }
                p->rates = r;
                p->n_alloc = n;
        }
        p->rates[p->n_rates++] = rate;
}

static int cmp_float(const void *a, const void *b) {
        float x = *(const float *) a, y = *(const float *) b;

        return (x > y) - (x < y);
}

/* The phase's windows: their 1st percentile and mean, in ops/s, "-" without windows. Sorts them. */
static void window_figures(struct phase *p, char *p1, char *mean, size_t len) {
        double sum = 0;

        if (p->n_rates == 0) {
                snprintf(p1, len, "-");
                snprintf(mean, len, "-");
                return;
        }
        qsort(p->rates, p->n_rates, sizeof(*p->rates), cmp_float);
        for (size_t i = 0; i < p->n_rates; i++)
                sum += p->rates[i];
        snprintf(p1, len, "%.1f", p->rates[p->n_rates / 100]);
        snprintf(mean, len, "%.1f", sum / (double) p->n_rates);
}

static void print_phases(void) {
        for (unsigned i = 0; i < nphases; i++) {
                struct phase *p = &phases[i];
                char p50[24], p99[24], p999[24], max[24], r1[24], rmean[24];

                window_figures(p, r1, rmean, sizeof(r1));
                printf("phase=%s ops=%llu p50_us=%s p99_us=%s p999_us=%s max_us=%s misses=%lld majflt=%ld windows=%zu "
                       "rate_p1=%s rate_mean=%s\n",
                       p->name, (unsigned long long) p->lat.n, hist_quantile(p50, sizeof(p50), &p->lat, 500),
                       hist_quantile(p99, sizeof(p99), &p->lat, 990), hist_quantile(p999, sizeof(p999), &p->lat, 999),
                       p->lat.n ? us(max, sizeof(max), p->lat.max_ns) : "-", nowait ? (long long) p->misses : -1LL,
                       p->majflt, p->n_rates, r1, rmean);
                free(p->rates);
                p->rates = NULL;
        }
        fflush(stdout);
}

int main(int argc, char *argv[]) {
        size_t anon_pages, file_pages;
        unsigned char *anon, buf[PAGE];
        struct stat st;
        char mode[16] = "busy", label[LABEL_LEN] = "-", current[LABEL_LEN] = "";
        struct phase *phase = NULL;
        double start, next_report, next_mode = 0, window_start = 0;
        unsigned long ops = 0, window_ops = 0, seed = 12345;
        bool window_working = false; /* busy or light at the window's start */
        uint64_t misses = 0;
        long majflt_second, majflt_phase;
        int fd, log_fd = -1, r = 0, passes;
        off_t log_off = 0;

        if (argc != 4) {
                fprintf(stderr, "usage: pwapp ANON_MIB FILE MODEFILE\n");
                return 2;
        }
        anon_pages = (size_t) atol(argv[1]) * 256;
        anon = malloc(anon_pages * PAGE);
        fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (!anon || fd < 0 || fstat(fd, &st) < 0) {
                perror("pwapp");
                free(anon);
                if (fd >= 0)
                        close(fd);
                return 1;
        }
        /* SIGTERM ends a run as "stop" does, with the phases' figures. */
        sigaction(SIGTERM, &(struct sigaction){ .sa_handler = on_sigterm }, NULL);
        file_pages = (size_t) st.st_size / PAGE;
        for (size_t i = 0; i < anon_pages; i++)
                memset(anon + i * PAGE, (int) (i & 0xff) | 1, PAGE); /* not zero pages: real memory */
        passes = getenv("PWAPP_PASSES") ? atoi(getenv("PWAPP_PASSES")) : 2;
        if (passes < 1 || passes > 4) {
                fprintf(stderr, "pwapp: PWAPP_PASSES must be 1 to 4\n");
                free(anon);
                close(fd);
                return 2;
        }
        if (getenv("PWAPP_LOG")) {
                log_fd = open(getenv("PWAPP_LOG"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (log_fd < 0) {
                        fprintf(stderr, "pwapp: PWAPP_LOG %s: %s\n", getenv("PWAPP_LOG"), strerror(errno));
                        free(anon);
                        close(fd);
                        return 1;
                }
        }
        for (int pass = 0; pass < passes; pass++)
                for (size_t i = 0; i < file_pages; i++)
                        if (pread(fd, buf, PAGE, (off_t) (i * PAGE)) != PAGE)
                                break;
        if (st.st_size > 0) {
                file_map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
                if (file_map == MAP_FAILED)
                        file_map = NULL;
        }
        printf("ready anon_mib=%s file_mib=%zu\n", argv[1], file_pages / 256);
        fflush(stdout);

        start = now();
        next_report = start + 1;
        majflt_second = majflt_phase = majflt(); /* not the faults of the setup above */
        for (;;) {
                double t = now();

                if (t >= next_mode) {
                        /* The window that ends here, in the phase it began in. */
                        if (window_working && phase && t > window_start)
                                add_rate(phase, (float) ((double) window_ops / (t - window_start)));
                        read_mode(argv[3], mode, sizeof(mode), label);
                        next_mode = t + 0.1;
                        if (strcmp(mode, "stop") == 0)
                                break;
                        if (!phase || strcmp(label, current) != 0) {
                                long f = majflt();

                                if (phase)
                                        phase->majflt += f - majflt_phase;
                                majflt_phase = f;
                                phase = phase_of(label);
                                snprintf(current, sizeof(current), "%s", label);
                        }
                        window_start = t;
                        window_ops = 0;
                        window_working = strcmp(mode, "busy") == 0 || strcmp(mode, "light") == 0;
                }
                if (terminated)
                        break;
                if (t >= next_report) {
                        long f = majflt();
                        char p99[24];

                        printf("t=%.0f mode=%s ops=%lu misses=%lld majflt=%ld p99_us=%s\n", t - start, mode, ops,
                               nowait ? (long long) misses : -1LL, f - majflt_second,
                               hist_quantile(p99, sizeof(p99), &second, 990));
                        fflush(stdout);
                        ops = 0;
                        misses = 0;
                        majflt_second = f;
                        memset(&second, 0, sizeof(second));
                        next_report += 1;
                }
                bool light = strcmp(mode, "light") == 0;

                if (light || strcmp(mode, "busy") == 0) {
                        bool miss = false;
                        uint64_t t0 = now_ns();

                        /*
                         * Low locality: a random anonymous page and a random file page.
                         * Volatile: the compiler may neither drop the touch nor move it
                         * out of the timed span.
                         */
                        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
                        ((volatile unsigned char *) anon)[((seed >> 17) % anon_pages) * PAGE + (seed & (PAGE - 1))]++;
                        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
                        if (read_file(fd, buf, 64, (off_t) (((seed >> 17) % file_pages) * PAGE), &miss) < 0) {
                                perror("pwapp: read");
                                r = 1;
                                break;
                        }
                        if (log_fd >= 0) {
                                if (pwrite(log_fd, buf, PAGE, log_off) != PAGE || fdatasync(log_fd) < 0) {
                                        perror("pwapp: log");
                                        r = 1;
                                        break;
                                }
                                log_off = (log_off + PAGE) % (64 * 1024 * 1024);
                        }

                        uint64_t ns = now_ns() - t0;

                        hist_add(&second, ns);
                        hist_add(&phase->lat, ns);
                        if (miss) {
                                misses++;
                                phase->misses++;
                        }
                        ops++;
                        window_ops++;
                        nanosleep(&(struct timespec){ .tv_nsec = light ? 25 * PAUSE_NS : PAUSE_NS }, NULL);
                } else
                        nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
        }
        if (phase)
                phase->majflt += majflt() - majflt_phase;
        print_phases();
        /* Freed, not left to exit: the sanitizer pass runs this program too. */
        free(anon);
        if (file_map)
                munmap(file_map, (size_t) st.st_size);
        close(fd);
        if (log_fd >= 0)
                close(log_fd);
        return r;
}
