/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake-pagewardend SOCKET RESPONSE.json: listens on SOCKET and answers every
 * request, whatever it asks, with RESPONSE.json on one line (the golden
 * files of tests/golden/ctl are indented).  For the command-line tests of
 * what pagewardenctl does with an answer: its exit status, pager, width,
 * legend and colour.  Prints "ready" once it listens; runs until killed.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        json_object *resp;
        const char *line;
        int fd;

        if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "usage: fake-pagewardend SOCKET RESPONSE.json\n");
                return 2;
        }
        resp = json_object_from_file(argv[2]);
        if (!resp) {
                fprintf(stderr, "fake-pagewardend: %s: %s\n", argv[2], json_util_get_last_err());
                return 1;
        }
        line = json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN);
        strcpy(sa.sun_path, argv[1]);
        (void) unlink(argv[1]);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
                perror("fake-pagewardend");
                return 1;
        }
        puts("ready");
        fflush(stdout);
        for (;;) {
                int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                char buf[65536];
                ssize_t n;

                if (c < 0)
                        continue;
                /* One request: a line. */
                while ((n = read(c, buf, sizeof(buf))) > 0 && !memchr(buf, '\n', (size_t) n))
                        ;
                if (n > 0 && (write(c, line, strlen(line)) < 0 || write(c, "\n", 1) < 0))
                        perror("fake-pagewardend: write");
                close(c);
        }
}
