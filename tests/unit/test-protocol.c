/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common.h"
#include "protocol.h"

static int parse(const char *s, struct pw_request *req, const char **why) {
        return protocol_parse_request(s, strlen(s), req, why);
}

START_TEST(test_protocol_valid) {
        struct pw_request req;
        const char *why = NULL;

        ck_assert_int_eq(parse("{\"command\":\"status\"}", &req, &why), 0);
        ck_assert_int_eq(req.command, PW_CMD_STATUS);
        ck_assert_int_eq(parse(" {\"command\": \"run\", \"class\": \"backup\", \"name\": \"n1\", \"pid\": 1234} \r", &req,
                               &why),
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
        { "{\"command\":\"move\",\"class\":\"b\",\"pids\":[5,\"x\"]}", "\"pids\" holds something that is not a process id" },
        { "{\"command\":\"move\",\"class\":\"b\",\"pids\":[5],\"tree\":1}", "\"tree\" must be true or false" },
        { "{\"command\":\"show\",\"job\":{\"a\":[[[[[[[[[[1]]]]]]]]]]}}", "request is not valid JSON" },
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

/* What the client formats, the daemon parses back. */
START_TEST(test_protocol_roundtrip) {
        struct pw_request a = { .command = PW_CMD_MOVE, .class = "backup", .name = "x", .pids = { 5, 6 }, .n_pids = 2,
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
}
END_TEST

Suite *protocol_suite(void) {
        Suite *s = suite_create("protocol");
        TCase *tc = tcase_create("requests");

        tcase_add_test(tc, test_protocol_valid);
        tcase_add_loop_test(tc, test_protocol_invalid, 0, ELEMENTSOF(bad_requests));
        tcase_add_test(tc, test_protocol_limits);
        tcase_add_test(tc, test_protocol_roundtrip);
        suite_add_tcase(s, tc);
        return s;
}
