/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pwload: load generator for the VM scenarios (busybox has no O_DIRECT dd).
 *
 *   pwload write-direct FILE MIB   write MIB MiB with O_DIRECT, print the rate
 *   pwload write FILE MIB          write through the page cache (no fsync)
 *   pwload read FILE               read through the page cache, print the rate
 *
 * Prints "bytes=N seconds=S mib_per_s=R" on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

        printf("bytes=%lld seconds=%.3f mib_per_s=%.2f\n", bytes, secs, (double) bytes / CHUNK / (secs > 0 ? secs : 1e-9));
        return 0;
}

int main(int argc, char *argv[]) {
        void *buf;
        long long total = 0;
        double start;
        int fd;

        if (argc < 3) {
                fprintf(stderr, "usage: pwload write-direct|write FILE MIB | read FILE\n");
                return 2;
        }
        if (posix_memalign(&buf, 4096, CHUNK) != 0)
                return 1;
        memset(buf, 0x5a, CHUNK);
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
        fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (strcmp(argv[1], "write-direct") == 0 ? O_DIRECT : 0),
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
