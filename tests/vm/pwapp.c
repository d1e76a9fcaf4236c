/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pwapp: the "application" of the governor scenario.  It keeps a working set
 * of anonymous memory and of file data read through the page cache, touches
 * both at random with low locality (one access every few milliseconds: the
 * "now and then" pattern whose pages the LRU gives away), and reports how
 * many operations it completed each second.
 *
 *   pwapp ANON_MIB FILE MODEFILE
 *
 * FILE is read once at start (its pages are then charged to this cgroup).
 * MODEFILE holds "busy", "light", "idle" or "stop"; it is read every 100 ms.
 * Light: the same accesses 25 times less often (one every 50 ms), the
 * rarely but regularly used buffers whose pages an LRU gives away.  Each
 * second pwapp prints "t=SECONDS mode=MODE ops=N" on stdout.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define PAUSE_NS 2000000 /* one access every 2 ms, plus the access itself */

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void read_mode(const char *path, char *mode, size_t len) {
        FILE *f = fopen(path, "re");

        if (!f)
                return;
        if (fgets(mode, (int) len, f))
                mode[strcspn(mode, "\n")] = '\0';
        fclose(f);
}

int main(int argc, char *argv[]) {
        size_t anon_pages, file_pages;
        unsigned char *anon, buf[PAGE];
        struct stat st;
        char mode[16] = "busy";
        double start, next_report, next_mode = 0;
        unsigned long ops = 0, seed = 12345;
        int fd;

        if (argc != 4) {
                fprintf(stderr, "usage: pwapp ANON_MIB FILE MODEFILE\n");
                return 2;
        }
        anon_pages = (size_t) atol(argv[1]) * 256;
        anon = malloc(anon_pages * PAGE);
        fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (!anon || fd < 0 || fstat(fd, &st) < 0) {
                perror("pwapp");
                return 1;
        }
        file_pages = (size_t) st.st_size / PAGE;
        for (size_t i = 0; i < anon_pages; i++)
                memset(anon + i * PAGE, (int) (i & 0xff) | 1, PAGE); /* not zero pages: real memory */
        for (size_t i = 0; i < file_pages; i++)
                if (pread(fd, buf, PAGE, (off_t) (i * PAGE)) != PAGE)
                        break;
        printf("ready anon_mib=%s file_mib=%zu\n", argv[1], file_pages / 256);
        fflush(stdout);

        start = now();
        next_report = start + 1;
        for (;;) {
                double t = now();

                if (t >= next_mode) {
                        read_mode(argv[3], mode, sizeof(mode));
                        next_mode = t + 0.1;
                        if (strcmp(mode, "stop") == 0)
                                break;
                }
                if (t >= next_report) {
                        printf("t=%.0f mode=%s ops=%lu\n", t - start, mode, ops);
                        fflush(stdout);
                        ops = 0;
                        next_report += 1;
                }
                bool light = strcmp(mode, "light") == 0;

                if (light || strcmp(mode, "busy") == 0) {
                        /* Low locality: a random anonymous page and a random file page. */
                        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
                        anon[((seed >> 17) % anon_pages) * PAGE + (seed & (PAGE - 1))]++;
                        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
                        if (pread(fd, buf, 64, (off_t) (((seed >> 17) % file_pages) * PAGE)) < 0)
                                return 1;
                        ops++;
                        nanosleep(&(struct timespec){ .tv_nsec = light ? 25 * PAUSE_NS : PAUSE_NS }, NULL);
                } else
                        nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
        }
        return 0;
}
