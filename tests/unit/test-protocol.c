/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common.h"
#include "protocol.h"
#include "units.h"

static int parse(const char *s, struct pw_request *req, const char **why) {
        return protocol_parse_request(s, strlen(s), req, why);
}

START_TEST(test_protocol_valid) {
        struct pw_request req;
        const char *why = NULL;

        ck_assert_int_eq(parse("{\"command\":\"status\"}", &req, &why), 0);
        ck_assert_int_eq(req.command, PW_CMD_STATUS);
        ck_assert_int_eq(parse(" {\"command\": \"run\", \"class\": \"backup\", \"name\": \"n1\", \"pid\": 1234} \r",
                               &req, &why),
                         0);
        ck_assert_int_eq(req.command, PW_CMD_RUN);
        ck_assert_str_eq(req.class, "backup");
        ck_assert_str_eq(req.name, "n1");
        ck_assert_int_eq(req.pid, 1234);
        ck_assert_int_eq(parse("{\"command\":\"move\",\"class\":\"c\",\"pids\":[10,11],\"tree\":true}", &req, &why), 0);
        ck_assert_uint_eq(req.n_pids, 2);
        ck_assert_int_eq(req.pids[1], 11);
        ck_assert(req.tree);
        ck_assert_int_eq(parse("{\"command\":\"show\",\"job\":\"17\"}", &req, &why), 0);
        ck_assert_str_eq(req.job, "17");
        ck_assert_int_eq(parse("{\"command\":\"kill\",\"job\":\"nightly\",\"signal\":10}", &req, &why), 0);
        ck_assert_int_eq(req.command, PW_CMD_KILL);
        ck_assert_str_eq(req.job, "nightly");
        ck_assert_int_eq(req.signal, 10);
        ck_assert_int_eq(parse("{\"command\":\"list\",\"all\":true}", &req, &why), 0);
        ck_assert(req.all);
        ck_assert_int_eq(parse("{\"command\":\"freeze\",\"job\":\"3\"}", &req, &why), 0);
        ck_assert_int_eq(req.command, PW_CMD_FREEZE);
        ck_assert_int_eq(parse("{\"command\":\"thaw\",\"job\":\"3\"}", &req, &why), 0);
        ck_assert_int_eq(req.command, PW_CMD_THAW);
        ck_assert_int_eq(parse("{\"command\":\"stop\",\"job\":\"3\"}", &req, &why), 0);
        ck_assert_int_eq(req.command, PW_CMD_STOP);
}
END_TEST

static const struct {
        const char *text;
        const char *why;
} bad_requests[] = {
        { "", "request is not valid JSON" },
        { "garbage", "request is not valid JSON" },
        { "{\"command\":\"status\"", "request is not valid JSON" },
        { "[1,2]", "request is not a JSON object" },
        { "\"status\"", "request is not a JSON object" },
        { "{\"command\":\"status\"} {}", "request has data after its JSON object" },
        { "{}", "the request has no \"command\"" },
        { "{\"command\":7}", "the request has no \"command\"" },
        { "{\"command\":\"format-disk\"}", "unknown command" },
        { "{\"command\":\"status\",\"class\":\"x\"}", "the request has a field its command does not take" },
        { "{\"command\":\"run\",\"class\":\"backup\"}", "the request lacks a field its command needs" },
        { "{\"command\":\"run\",\"class\":\"../x\",\"pid\":5}", "\"class\" is not a valid class name" },
        { "{\"command\":\"run\",\"class\":\"b\",\"pid\":1}", "\"pid\" is not a process id" },
        { "{\"command\":\"run\",\"class\":\"b\",\"pid\":-5}", "\"pid\" is not a process id" },
        { "{\"command\":\"run\",\"class\":\"b\",\"pid\":99999999999}", "\"pid\" is not a process id" },
        { "{\"command\":\"run\",\"class\":\"b\",\"pid\":\"5\"}", "\"pid\" is not a process id" },
        { "{\"command\":\"move\",\"class\":\"b\",\"pids\":[]}", "\"pids\" must be a list of 1 to 1024 process ids" },
        { "{\"command\":\"move\",\"class\":\"b\",\"pids\":[5,\"x\"]}",
          "\"pids\" holds something that is not a process id" },
        { "{\"command\":\"move\",\"class\":\"b\",\"pids\":[5],\"tree\":1}", "\"tree\" must be true or false" },
        { "{\"command\":\"show\",\"job\":{\"a\":[[[[[[[[[[1]]]]]]]]]]}}", "request is not valid JSON" },
        { "{\"command\":\"kill\",\"job\":\"3\"}", "the request lacks a field its command needs" },
        { "{\"command\":\"kill\",\"job\":\"3\",\"signal\":0}", "\"signal\" is not the number of " PW_SIGNALS },
        { "{\"command\":\"kill\",\"job\":\"3\",\"signal\":65}", "\"signal\" is not the number of " PW_SIGNALS },
        { "{\"command\":\"kill\",\"job\":\"3\",\"signal\":\"TERM\"}", "\"signal\" is not the number of " PW_SIGNALS },
        { "{\"command\":\"kill\",\"job\":\"3\",\"signal\":32}", "\"signal\" is not the number of " PW_SIGNALS },
        { "{\"command\":\"kill\",\"job\":\"3\",\"signal\":11}", "\"signal\" is not the number of " PW_SIGNALS },
        { "{\"command\":\"stop\",\"job\":\"3\",\"signal\":9}", "the request has a field its command does not take" },
        { "{\"command\":\"freeze\"}", "the request lacks a field its command needs" },
        /* json-c cuts strings and keys at an escaped NUL: "backup\u0000x" would be read as "backup". */
        { "{\"command\":\"run\",\"class\":\"backup\\u0000x\",\"pid\":5}", "request contains a NUL byte" },
        { "{\"command\":\"status\\u0000\"}", "request contains a NUL byte" },
        { "{\"command\":\"run\",\"class\\u0000x\":\"backup\",\"pid\":5}", "request contains a NUL byte" },
        /* Nesting: 7 levels are parsed (and then refused for what they are), 8 are not. */
        { "{\"command\":\"show\",\"job\":[[[[[[1]]]]]]}", "\"job\" is not a job id or name" },
        { "{\"command\":\"show\",\"job\":[[[[[[[1]]]]]]]}", "request is not valid JSON" },
};

START_TEST(test_protocol_invalid) {
        struct pw_request req;
        const char *why = NULL;

        ck_assert_int_eq(parse(bad_requests[_i].text, &req, &why), -EINVAL);
        ck_assert_str_eq(why, bad_requests[_i].why);
}
END_TEST

START_TEST(test_protocol_limits) {
        size_t n = PROTOCOL_MAX_MESSAGE + 1;
        char *big = malloc(n + 1);
        struct pw_request req;
        const char *why;
        static const char nul[] = "{\"command\":\"status\"}\0x";

        memset(big, ' ', n);
        big[n] = '\0';
        ck_assert_int_eq(protocol_parse_request(big, n, &req, &why), -EINVAL);
        ck_assert_str_eq(why, "request is larger than 64 KiB");
        free(big);
        ck_assert_int_eq(protocol_parse_request(nul, sizeof(nul) - 1, &req, &why), -EINVAL);
        ck_assert_str_eq(why, "request contains a NUL byte");
}
END_TEST

static uint64_t cpu_usec(void) {
        return now_usec(CLOCK_PROCESS_CPUTIME_ID);
}

/* A request of about size bytes: head, then unit repeated, then tail. */
static char *big_request(const char *head, const char *unit, const char *tail, size_t size) {
        size_t lh = strlen(head), lu = strlen(unit), lt = strlen(tail), n = (size - lh - lt) / lu;
        char *s = malloc(lh + n * lu + lt + 1), *p = s;

        ck_assert_ptr_nonnull(s);
        p = mempcpy(p, head, lh);
        for (size_t i = 0; i < n; i++)
                p = mempcpy(p, unit, lu);
        p = mempcpy(p, tail, lt);
        *p = '\0';
        return s;
}

/* The largest requests of every shape are refused, in little time: the daemon parses them on its loop. */
START_TEST(test_protocol_adversarial) {
        static const struct {
                const char *what, *head, *unit, *tail, *why;
        } cases[] = {
                { "30,000 pids", "{\"command\":\"move\",\"class\":\"b\",\"pids\":[2", ",2", "]}",
                  "\"pids\" must be a list of 1 to 1024 process ids" },
                { "16,000 duplicate keys", "{\"command\":\"status\"", ",\"a\":1", "}",
                  "the request has a field its command does not take" },
                { "a long name", "{\"command\":\"show\",\"job\":\"", "a", "\"}", "\"job\" is not a job id or name" },
                { "escapes", "{\"command\":\"show\",\"job\":\"", "\\u00e9", "\"}", "\"job\" is not a job id or name" },
                { "a long number", "{\"command\":\"run\",\"class\":\"b\",\"pid\":1", "0", "}",
                  "\"pid\" is not a process id" },
                { "nested lists", "{\"command\":\"show\",\"job\":[", "[[[[[1]]]]],", "1]}",
                  "\"job\" is not a job id or name" },
        };
        struct pw_request *req = malloc(sizeof(*req));

        ck_assert_ptr_nonnull(req);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *s = big_request(cases[i].head, cases[i].unit, cases[i].tail, PROTOCOL_MAX_MESSAGE);
                const char *why = NULL;
                uint64_t t0 = cpu_usec(), t;
                int r = protocol_parse_request(s, strlen(s), req, &why);

                t = cpu_usec() - t0;
                fprintf(stderr, "protocol: %s (%zu bytes): %.2f ms of CPU\n", cases[i].what, strlen(s),
                        (double) t / 1000);
                ck_assert_uint_le(strlen(s), PROTOCOL_MAX_MESSAGE);
                ck_assert_int_eq(r, -EINVAL);
                ck_assert_msg(streq(why, cases[i].why), "%s: %s", cases[i].what, why);
                ck_assert_uint_lt(t, 2 * 1000000);
                free(s);
        }
        free(req);
}
END_TEST

/* As many different keys as fit: json-c hashes them all before the first is looked at. */
START_TEST(test_protocol_many_keys) {
        char *s = malloc(PROTOCOL_MAX_MESSAGE + 1), *p = s;
        struct pw_request *req = malloc(sizeof(*req));
        const char *why = NULL;
        uint64_t t0, t;
        size_t n = 0;

        ck_assert_ptr_nonnull(s);
        ck_assert_ptr_nonnull(req);
        p += sprintf(p, "{\"command\":\"status\"");
        while ((size_t) (p - s) + 16 < PROTOCOL_MAX_MESSAGE)
                p += sprintf(p, ",\"k%zu\":1", n++);
        strcpy(p, "}");
        t0 = cpu_usec();
        ck_assert_int_eq(protocol_parse_request(s, strlen(s), req, &why), -EINVAL);
        t = cpu_usec() - t0;
        fprintf(stderr, "protocol: %zu different keys (%zu bytes): %.2f ms of CPU\n", n, strlen(s), (double) t / 1000);
        ck_assert_str_eq(why, "the request has a field its command does not take");
        ck_assert_uint_lt(t, 2 * 1000000);
        free(req);
        free(s);
}
END_TEST

/* 1024 pids are taken; 1025 are not. */
START_TEST(test_protocol_max_pids) {
        struct pw_request *req = malloc(sizeof(*req));
        const char *why = NULL;
        char *s;

        ck_assert_ptr_nonnull(req);
        for (size_t n = PROTOCOL_MAX_PIDS; n <= PROTOCOL_MAX_PIDS + 1; n++) {
                char *p;

                s = malloc(64 + 8 * n);
                ck_assert_ptr_nonnull(s);
                p = s + sprintf(s, "{\"command\":\"move\",\"class\":\"b\",\"pids\":[");
                for (size_t i = 0; i < n; i++)
                        p += sprintf(p, "%s%zu", i ? "," : "", i + 2);
                strcpy(p, "]}");
                ck_assert_int_eq(protocol_parse_request(s, strlen(s), req, &why), n > PROTOCOL_MAX_PIDS ? -EINVAL : 0);
                if (n <= PROTOCOL_MAX_PIDS)
                        ck_assert_int_eq(req->pids[n - 1], (pid_t) n + 1);
                free(s);
        }
        free(req);
}
END_TEST

/* What the client formats, the daemon parses back. */
START_TEST(test_protocol_roundtrip) {
        struct pw_request a = { .command = PW_CMD_MOVE,
                                .class = "backup",
                                .name = "x",
                                .pids = { 5, 6 },
                                .n_pids = 2,
                                .tree = true },
                          b;
        const char *why;
        char *s = protocol_format_request(&a);

        ck_assert_ptr_nonnull(s);
        ck_assert(endswith(s, "\n"));
        ck_assert_int_eq(protocol_parse_request(s, strlen(s) - 1, &b, &why), 0);
        ck_assert_int_eq(b.command, PW_CMD_MOVE);
        ck_assert_str_eq(b.class, "backup");
        ck_assert_str_eq(b.name, "x");
        ck_assert_uint_eq(b.n_pids, 2);
        ck_assert(b.tree);
        free(s);

        a = (struct pw_request){ .command = PW_CMD_KILL, .job = "nightly", .signal = 1 };
        s = protocol_format_request(&a);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_eq(protocol_parse_request(s, strlen(s) - 1, &b, &why), 0);
        ck_assert_int_eq(b.command, PW_CMD_KILL);
        ck_assert_str_eq(b.job, "nightly");
        ck_assert_int_eq(b.signal, 1);
        free(s);
}
END_TEST

/* A limit in the daemon's answers: the number, or "max". */
START_TEST(test_protocol_limit_json) {
        json_object *a = protocol_limit_json(UNITS_MAX), *b = protocol_limit_json(268435456);

        ck_assert_str_eq(json_object_to_json_string(a), "\"max\"");
        ck_assert_str_eq(json_object_to_json_string(b), "268435456");
        json_object_put(a);
        json_object_put(b);
}
END_TEST

/* A uid's name: root's is root; a uid nobody has, or a buffer too small, gives NULL and "". */
START_TEST(test_user_name_of) {
        char buf[64] = "x", small[3] = "x";

        ck_assert_str_eq(user_name_of(0, buf, sizeof(buf)), "root");
        ck_assert_str_eq(buf, "root");
        ck_assert_ptr_null(user_name_of(4000000000u, buf, sizeof(buf)));
        ck_assert_str_eq(buf, "");
        ck_assert_ptr_null(user_name_of(0, small, sizeof(small)));
        ck_assert_str_eq(small, "");
}
END_TEST

Suite *protocol_suite(void) {
        Suite *s = suite_create("protocol");
        TCase *tc = tcase_create("requests");

        tcase_add_test(tc, test_protocol_valid);
        tcase_add_loop_test(tc, test_protocol_invalid, 0, ELEMENTSOF(bad_requests));
        tcase_add_test(tc, test_protocol_limits);
        tcase_add_test(tc, test_protocol_adversarial);
        tcase_add_test(tc, test_protocol_limit_json);
        tcase_add_test(tc, test_user_name_of);
        tcase_add_test(tc, test_protocol_many_keys);
        tcase_add_test(tc, test_protocol_max_pids);
        tcase_add_test(tc, test_protocol_roundtrip);
        suite_add_tcase(s, tc);
        return s;
}
