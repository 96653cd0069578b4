/*
 * kube/podexec: the channel framing and the exit status, fed split at every
 * byte; and the client against a small WebSocket server in this test
 * (a raw socket, so it can answer what a real API server would: v4 only,
 * fragments, a refused upgrade, a close without a status, a resize).
 */
#include <criterion/criterion.h>

#include "base/err.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/podexec.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct collected {
	char out[256];
	size_t out_len;
	char err[256];
	size_t err_len;
};

static int collect(void *ctx, int channel, const char *data, size_t len)
{
	struct collected *c = ctx;
	char *dst = channel == PODEXEC_CH_STDOUT ? c->out : c->err;
	size_t *n = channel == PODEXEC_CH_STDOUT ? &c->out_len : &c->err_len;

	cr_assert(*n + len < sizeof(c->out));
	memcpy(dst + *n, data, len);
	*n += len;
	dst[*n] = '\0';
	return 0;
}

static const char status_exit_3[] =
	"{\"metadata\":{},\"status\":\"Failure\",\"message\":\"command terminated with non-zero "
	"exit code: error executing command [sh -c exit 3], exit code 3\",\"reason\":"
	"\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\"3\"}]}}";

Test(podexec, demux_hands_on_stdout_and_stderr_and_keeps_the_status_split_anywhere)
{
	struct {
		const char *bytes;
		size_t len;
	} msgs[3];
	char status_msg[sizeof(status_exit_3) + 1];

	status_msg[0] = PODEXEC_CH_ERROR;
	memcpy(status_msg + 1, status_exit_3, sizeof(status_exit_3) - 1);
	msgs[0].bytes = "\x01hello\nwor";
	msgs[0].len = 10;
	msgs[1].bytes = "\x02oops";
	msgs[1].len = 5;
	msgs[2].bytes = status_msg;
	msgs[2].len = sizeof(status_exit_3);
	for (size_t m = 0; m < 3; m++) {
		for (size_t cut = 1; cut <= msgs[m].len; cut++) {
			struct collected c = { 0 };
			struct podexec_demux d;
			int code;

			podexec_demux_init(&d, collect, &c);
			for (size_t i = 0; i < 3; i++) {
				size_t first = i == m ? cut : msgs[i].len;

				cr_assert_eq(podexec_demux_feed(&d, msgs[i].bytes, first, true,
								first == msgs[i].len), 0);
				if (first < msgs[i].len)
					cr_assert_eq(podexec_demux_feed(&d, msgs[i].bytes + first,
									msgs[i].len - first,
									false, true), 0);
			}
			cr_assert_str_eq(c.out, "hello\nwor");
			cr_assert_str_eq(c.err, "oops");
			cr_assert(d.has_status);
			cr_assert_eq(podexec_status_exit_code(d.status.data, d.status.len, &code,
							      NULL, 0), 0);
			cr_assert_eq(code, 3, "message %zu cut at %zu", m, cut);
			podexec_demux_release(&d);
		}
	}
}

Test(podexec, demux_refuses_an_empty_message_a_second_status_and_a_stray_fragment)
{
	struct podexec_demux d;

	podexec_demux_init(&d, NULL, NULL);
	cr_assert_eq(podexec_demux_feed(&d, "", 0, true, true), CADRE_EPARSE);
	cr_assert_eq(podexec_demux_feed(&d, "x", 1, false, true), CADRE_EPARSE);
	cr_assert_eq(podexec_demux_feed(&d, "\x03{}", 3, true, true), 0);
	cr_assert_eq(podexec_demux_feed(&d, "\x03{}", 3, true, true), CADRE_EPARSE);
	podexec_demux_release(&d);
}

Test(podexec, status_success_is_0_and_a_failure_without_exit_code_keeps_its_message)
{
	char msg[128];
	int code = 99;

	cr_assert_eq(podexec_status_exit_code("{\"metadata\":{},\"status\":\"Success\"}", 34,
					      &code, msg, sizeof(msg)), 0);
	cr_assert_eq(code, 0);
	cr_assert_eq(podexec_status_exit_code(status_exit_3, sizeof(status_exit_3) - 1, &code,
					      msg, sizeof(msg)), 0);
	cr_assert_eq(code, 3);
	static const char no_exec[] = "{\"status\":\"Failure\",\"reason\":\"InternalError\","
				      "\"message\":\"executable file not found\"}";
	cr_assert_eq(podexec_status_exit_code(no_exec, sizeof(no_exec) - 1, &code, msg,
					      sizeof(msg)), 0);
	cr_assert_eq(code, PODEXEC_NO_EXIT_CODE);
	cr_assert_str_eq(msg, "executable file not found");
	static const char bad_cause[] = "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
					"\"details\":{\"causes\":[{\"reason\":\"ExitCode\","
					"\"message\":\"x\"}]}}";
	cr_assert_eq(podexec_status_exit_code(bad_cause, sizeof(bad_cause) - 1, &code, msg,
					      sizeof(msg)), 0);
	cr_assert_eq(code, PODEXEC_NO_EXIT_CODE);
	static const char wrapped[] = "{\"status\":\"Failure\",\"reason\":\"InternalError\","
				      "\"message\":\"Internal error occurred: error executing command "
				      "in container: cmd wait: sh -c exit 5: exit status 5\"}";
	cr_assert_eq(podexec_status_exit_code(wrapped, sizeof(wrapped) - 1, &code, msg,
					      sizeof(msg)), 0);
	cr_assert_eq(code, 5, "the code a kubelet only wrote into the message");
	static const char not_last[] = "{\"status\":\"Failure\",\"message\":\"exit status 5 "
				       "and more\"}";
	cr_assert_eq(podexec_status_exit_code(not_last, sizeof(not_last) - 1, &code, msg,
					      sizeof(msg)), 0);
	cr_assert_eq(code, PODEXEC_NO_EXIT_CODE);
	cr_assert_eq(podexec_status_exit_code("not json", 8, &code, msg, sizeof(msg)),
		     CADRE_EPARSE);
	cr_assert_eq(podexec_status_exit_code("[1]", 3, &code, msg, sizeof(msg)), CADRE_EPARSE);
}

Test(podexec, path_escapes_every_word_of_the_command)
{
	char *argv[] = { "sh", "-c", "echo a&b=c" };
	struct buf b;

	buf_init(&b, 4096);
	cr_assert_eq(podexec_path(&b, "ml", "job-0", "main", argv, 3, false, false), 0);
	cr_assert_str_eq(buf_str(&b), "/api/v1/namespaces/ml/pods/job-0/exec?command=sh&command=-c"
		"&command=echo%20a%26b%3Dc&container=main&stdin=false&stdout=true&stderr=true"
		"&tty=false");
	cr_assert_eq(podexec_path(&b, "ml", "job-0", NULL, argv, 1, true, true), 0);
	cr_assert_str_eq(buf_str(&b), "/api/v1/namespaces/ml/pods/job-0/exec?command=sh"
		"&stdin=true&stdout=true&stderr=false&tty=true");
	cr_assert_eq(podexec_path(&b, "ml", "job-0", NULL, argv, 0, false, false), CADRE_EINVAL);
	buf_release(&b);
}

Test(podexec, resize_body_is_the_terminal_size_kubectl_sends)
{
	struct buf b;

	buf_init(&b, 64);
	cr_assert_eq(podexec_resize_body(132, 43, &b), 0);
	cr_assert_str_eq(buf_str(&b), "{\"Width\":132,\"Height\":43}");
	buf_release(&b);
}

/* ---- against a WebSocket server ---- */

enum scenario { V4_FRAGMENTS, FORBIDDEN, NO_STATUS, RESIZE, ECHO_LENGTHS };

struct server {
	int fd;
	int port;
	enum scenario scenario;
	pthread_t thread;
	char request[96 * 1024];
	char received[256];  /* the client's first message, for RESIZE */
	size_t received_len;
};

static void send_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* One server frame (unmasked): opcode with FIN when fin. */
static void send_frame(int fd, int opcode, bool fin, const void *data, size_t len)
{
	unsigned char h[4];
	size_t hl = 2;

	h[0] = (unsigned char)((fin ? 0x80 : 0) | opcode);
	if (len < 126) {
		h[1] = (unsigned char)len;
	} else {
		h[1] = 126;
		h[2] = (unsigned char)(len >> 8);
		h[3] = (unsigned char)len;
		hl = 4;
	}
	send_all(fd, h, hl);
	send_all(fd, data, len);
}

static void send_message(int fd, int channel, const char *text)
{
	char m[512];
	size_t len = strlen(text);

	m[0] = (char)channel;
	memcpy(m + 1, text, len);
	send_frame(fd, 2, true, m, len + 1);
}

static bool read_exact(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* The client's next frame, unmasked, into s->received. */
static void read_client_frame(struct server *s, int fd)
{
	unsigned char h[2], mask[4], ext[2];
	size_t len;

	if (!read_exact(fd, h, 2))
		return;
	len = h[1] & 0x7f;
	if (len == 126) {
		if (!read_exact(fd, ext, 2))
			return;
		len = (size_t)ext[0] << 8 | ext[1];
	}
	if (len > sizeof(s->received) || !read_exact(fd, mask, 4) ||
	    !read_exact(fd, s->received, len))
		return;
	for (size_t i = 0; i < len; i++)
		s->received[i] ^= (char)mask[i % 4];
	s->received_len = len;
}

static void accept_key(const char *request, char *out)
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	const char *k = strcasestr(request, "Sec-WebSocket-Key:");
	unsigned char digest[SHA_DIGEST_LENGTH];
	char joined[128];
	size_t n;

	cr_assert(k);
	k += 18;
	while (*k == ' ')
		k++;
	n = strcspn(k, "\r\n");
	snprintf(joined, sizeof(joined), "%.*s%s", (int)n, k, guid);
	SHA1((const unsigned char *)joined, strlen(joined), digest);
	EVP_EncodeBlock((unsigned char *)out, digest, SHA_DIGEST_LENGTH);
}

static void *serve(void *arg)
{
	struct server *s = arg;
	char reply[512], key[64];
	size_t got = 0;
	int fd = accept(s->fd, NULL, NULL);

	if (fd < 0)
		return NULL;
	while (got + 1 < sizeof(s->request) && !strstr(s->request, "\r\n\r\n")) {
		ssize_t n = read(fd, s->request + got, sizeof(s->request) - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
		s->request[got] = '\0';
	}
	if (s->scenario == FORBIDDEN) {
		static const char body[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
			"\"Failure\",\"message\":\"pods \\\"p-0\\\" is forbidden: User \\\"jane\\\" "
			"cannot create resource\",\"reason\":\"Forbidden\",\"code\":403}";
		char no[512];

		snprintf(no, sizeof(no), "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
		send_all(fd, no, strlen(no));
		goto out;
	}
	accept_key(s->request, key);
	snprintf(reply, sizeof(reply), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: %s\r\n\r\n",
		 key, s->scenario == V4_FRAGMENTS ? PODEXEC_PROTO_V4 : PODEXEC_PROTO_V5);
	send_all(fd, reply, strlen(reply));
	if (s->scenario == V4_FRAGMENTS) {
		send_frame(fd, 2, false, "\x01hel", 4);     /* binary, more to come */
		send_frame(fd, 0, true, "lo\n", 3);         /* continuation, final */
		send_message(fd, PODEXEC_CH_STDERR, "warn\n");
		send_message(fd, PODEXEC_CH_ERROR, status_exit_3);
	} else if (s->scenario == NO_STATUS) {
		send_message(fd, PODEXEC_CH_STDOUT, "partial");
	} else if (s->scenario == RESIZE) {
		read_client_frame(s, fd);
		send_message(fd, PODEXEC_CH_ERROR, "{\"metadata\":{},\"status\":\"Success\"}");
	} else if (s->scenario == ECHO_LENGTHS) {
		char line[64];

		snprintf(line, sizeof(line), "request %zu bytes\n", got);
		send_message(fd, PODEXEC_CH_STDOUT, line);
		send_frame(fd, 9, true, "hi", 2);  /* a ping, which the client answers */
		read_client_frame(s, fd);
		send_message(fd, PODEXEC_CH_ERROR, "{\"metadata\":{},\"status\":\"Success\"}");
	}
	send_frame(fd, 8, true, "\x03\xe8", 2);  /* close, 1000 */
	usleep(200000);
out:
	close(fd);
	return NULL;
}

static void server_start(struct server *s, enum scenario scenario)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->scenario = scenario;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(s->fd >= 0);
	cr_assert_eq(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(s->fd, 4), 0);
	cr_assert_eq(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
	s->port = ntohs(a.sin_port);
	cr_assert_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
	pthread_join(s->thread, NULL);
	close(s->fd);
}

static bool size_80x24(void *ctx, unsigned *cols, unsigned *rows)
{
	(void)ctx;
	*cols = 80;
	*rows = 24;
	return true;
}

/* Run s against srv with a client whose config the caller may have filled (cfg may be NULL). */
static void run_with(struct server *srv, struct kube_config *cfg, struct podexec_session *s,
		     char **argv, size_t argc, bool tty, struct collected *c)
{
	struct podexec_opts o = { .get_size = size_80x24 };
	struct kube_http *http;
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", srv->port);
	if (!cfg)
		cr_assert_eq(kube_config_new(url, &cfg), 0);
	cr_assert_eq(kube_http_new(cfg, NULL, &http), 0);
	*s = (struct podexec_session){ .ns = "ml", .pod = "p-0", .argv = argv, .argc = argc,
				       .tty = tty, .stdin_fd = -1, .on_output = collect, .ctx = c };
	cr_assert_eq(podexec_run(http, s, 1, &o), 0);
	server_stop(srv);
	kube_http_free(http);
	kube_config_free(cfg);
}

static void run_one(struct server *srv, struct podexec_session *s, bool tty, struct collected *c)
{
	static char *argv[] = { "echo", "a b" };

	run_with(srv, NULL, s, argv, 2, tty, c);
}

Test(podexec, a_v4_server_is_spoken_to_in_v4_and_its_fragments_and_exit_code_arrive)
{
	struct server srv;
	struct podexec_session s;
	struct collected c = { 0 };

	server_start(&srv, V4_FRAGMENTS);
	run_one(&srv, &s, false, &c);
	cr_assert_eq(s.st.code, 0, "%s", s.st.message);
	cr_assert_str_eq(s.protocol, PODEXEC_PROTO_V4);
	cr_assert_str_eq(c.out, "hello\n");
	cr_assert_str_eq(c.err, "warn\n");
	cr_assert_eq(s.exit_code, 3);
	cr_assert(strstr(srv.request, "GET /api/v1/namespaces/ml/pods/p-0/exec?command=echo"
			 "&command=a%20b&stdin=false&stdout=true&stderr=true&tty=false HTTP/1.1"),
		  "%s", srv.request);
	cr_assert(strstr(srv.request, PODEXEC_PROTO_V5 ",") || strstr(srv.request, PODEXEC_PROTO_V5
		  ", "), "v5 is offered first: %s", srv.request);
}

Test(podexec, a_refused_upgrade_is_the_http_status_as_an_error)
{
	struct server srv;
	struct podexec_session s;
	struct collected c = { 0 };

	server_start(&srv, FORBIDDEN);
	run_one(&srv, &s, false, &c);
	cr_assert_eq(s.st.code, CADRE_EFORBIDDEN, "%d %s", s.st.code, s.st.message);
	cr_assert_eq(s.st.http_status, 403);
	/* the API server's own words, as for any request it refuses */
	cr_assert(strstr(s.st.message, "User \"jane\" cannot create resource"), "%s",
		  s.st.message);
	cr_assert_eq(s.exit_code, PODEXEC_NO_EXIT_CODE);
}

Test(podexec, a_close_without_a_status_is_an_io_error_not_success)
{
	struct server srv;
	struct podexec_session s;
	struct collected c = { 0 };

	server_start(&srv, NO_STATUS);
	run_one(&srv, &s, false, &c);
	cr_assert_eq(s.st.code, CADRE_EIO, "%d %s", s.st.code, s.st.message);
	cr_assert_str_eq(c.out, "partial");
	cr_assert_eq(s.exit_code, PODEXEC_NO_EXIT_CODE);
}

Test(podexec, a_tty_session_sends_its_terminal_size_on_channel_4_first)
{
	struct server srv;
	struct podexec_session s;
	struct collected c = { 0 };

	server_start(&srv, RESIZE);
	run_one(&srv, &s, true, &c);
	cr_assert_eq(s.st.code, 0, "%s", s.st.message);
	cr_assert_eq(s.exit_code, 0);
	cr_assert_eq(srv.received_len, 25);
	cr_assert_eq(memcmp(srv.received, "\x04{\"Width\":80,\"Height\":24}", 25), 0);
	cr_assert(strstr(srv.request, "tty=true"));
}

Test(podexec, a_server_that_is_not_there_is_an_io_error)
{
	struct podexec_session s;
	static char *argv[] = { "true" };
	struct kube_config *cfg;
	struct kube_http *http;
	struct server srv;
	char url[64];

	/* a port that was just free */
	server_start(&srv, FORBIDDEN);
	shutdown(srv.fd, SHUT_RDWR);
	pthread_cancel(srv.thread);
	pthread_join(srv.thread, NULL);
	close(srv.fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", srv.port);
	cr_assert_eq(kube_config_new(url, &cfg), 0);
	cr_assert_eq(kube_http_new(cfg, NULL, &http), 0);
	s = (struct podexec_session){ .ns = "ml", .pod = "p-0", .argv = argv, .argc = 1,
				      .stdin_fd = -1 };
	cr_assert_eq(podexec_run(http, &s, 1, NULL), 0);
	cr_assert_eq(s.st.code, CADRE_EIO, "%d %s", s.st.code, s.st.message);
	kube_http_free(http);
	kube_config_free(cfg);
}

Test(podexec, a_large_token_and_a_long_command_are_sent_whole_with_the_impersonation)
{
	struct server srv;
	struct podexec_session s;
	struct collected c = { 0 };
	struct kube_config *cfg;
	char url[64], *token = malloc(12289), *word = malloc(16385), *argv[3], *auth;
	size_t len;

	/* a 12 KiB token (OIDC with many groups, Azure AD) and a 16 KiB command line */
	memset(token, 'T', 12288);
	token[12288] = '\0';
	memset(word, 'w', 16384);
	word[16384] = '\0';
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = word;
	server_start(&srv, ECHO_LENGTHS);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", srv.port);
	cr_assert_eq(kube_config_new(url, &cfg), 0);
	cfg->token = token;
	cfg->impersonate = calloc(1, sizeof(char *));
	cfg->impersonate[0] = strdup("Impersonate-User: jane");
	cfg->nimpersonate = 1;
	run_with(&srv, cfg, &s, argv, 3, false, &c);
	cr_assert_eq(s.st.code, 0, "%s", s.st.message);
	cr_assert_eq(s.exit_code, 0);
	auth = strstr(srv.request, "Authorization: Bearer ");
	cr_assert_not_null(auth);
	len = strcspn(auth + 22, "\r");
	cr_assert_eq(len, 12288, "the token arrived with %zu bytes", len);
	cr_assert(strstr(srv.request, word), "the command arrived whole");
	cr_assert(strstr(srv.request, "\r\nImpersonate-User: jane\r\n"));
	cr_assert(strstr(c.out, "request "), "%s", c.out);
	/* the ping was answered with a pong carrying its data */
	cr_assert_eq(srv.received_len, 2);
	cr_assert_eq(memcmp(srv.received, "hi", 2), 0);
	free(word);
}
