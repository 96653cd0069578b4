/*
 * ca_roots.c - the unit runners' libgit2 starts without the system's CA certificates.
 *
 * Criterion calls git_libgit2_init() in every process it starts, one per test, for the
 * diffs of its string assertions. libgit2 as Debian builds it (on mbedtls) then parses
 * every certificate of /etc/ssl/certs/ca-certificates.crt: about 54 million
 * instructions, two thirds of what a test process runs before its test, paid ~1200
 * times a run, and under valgrind about 0.14 s of CPU each time. Nothing
 * here speaks TLS through libgit2 (cli/bundle.c opens local repositories only), so
 * this definition, which the runner's executable exports and the dynamic linker binds
 * ahead of libmbedx509's, parses nothing and says all went well. Where libgit2 is
 * built on another TLS library, nothing calls it.
 */
/* mbedtls/x509_crt.h's prototype, with the chain opaque: the runners need no mbedtls headers. */
int mbedtls_x509_crt_parse_file(void *chain, const char *path);

int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	return 0;
}
