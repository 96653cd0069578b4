#include <criterion/criterion.h>
#include <string.h>

#include "base/err.h"
#include "controller/options.h"

static const char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

static const char *test_env(const char *name)
{
	if (!strcmp(name, "CADRE_KUBE_API_QPS"))
		return "50";
	if (!strcmp(name, "CADRE_GANG_SCHEDULER"))
		return "kueue";
	if (!strcmp(name, "CADRE_DEFAULT_IMAGE"))
		return "busybox";
	return NULL;
}

static const char *bad_env(const char *name)
{
	return strcmp(name, "CADRE_WORKERS") ? NULL : "many";
}

Test(options, defaults_follow_the_design)
{
	struct options o;
	struct buf err;
	char *argv[] = { "cadre-controller", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 1, argv, no_env, &err), 0);
	cr_assert_eq(o.kube_api_qps, 100);
	cr_assert_eq(o.kube_api_burst, 200);
	cr_assert_eq(o.starvation_seconds, 600);
	cr_assert_eq(o.gang_scheduler, GANG_BUILTIN);
	cr_assert_str_eq(o.accelerator_label, "nvidia.com/gpu.product");
	cr_assert_str_eq(o.cluster_domain, "cluster.local");
	cr_assert_null(o.namespace);
	cr_assert_null(o.default_image);
	cr_assert_not(o.leader_elect);
	options_release(&o);
	buf_release(&err);
}

Test(options, flags_win_over_environment)
{
	struct options o;
	struct buf err;
	char *argv[] = { "cadre-controller", "--kube-api-qps=20", "--namespace", "team-a",
			 "--leader-elect", "--gang-scheduler", "none", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 7, argv, test_env, &err), 0, "%s", buf_str(&err));
	cr_assert_eq(o.kube_api_qps, 20);
	cr_assert_eq(o.gang_scheduler, GANG_NONE);
	cr_assert_str_eq(o.namespace, "team-a");
	cr_assert_str_eq(o.default_image, "busybox");
	cr_assert(o.leader_elect);
	options_release(&o);
	buf_release(&err);
}

Test(options, environment_sets_what_flags_do_not)
{
	struct options o;
	struct buf err;
	char *argv[] = { "cadre-controller", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 1, argv, test_env, &err), 0);
	cr_assert_eq(o.kube_api_qps, 50);
	cr_assert_eq(o.gang_scheduler, GANG_KUEUE);
	options_release(&o);
	buf_release(&err);
}

Test(options, bad_values_name_the_flag_and_source)
{
	struct options o;
	struct buf err;
	char *argv1[] = { "cadre-controller", "--workers=0", NULL };
	char *argv2[] = { "cadre-controller", "--gang-scheduler=volcano", NULL };
	char *argv3[] = { "cadre-controller", "--bogus", NULL };
	char *argv4[] = { "cadre-controller", "--namespace", NULL };
	char *argv5[] = { "cadre-controller", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 2, argv1, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--workers"), "%s", buf_str(&err));
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 2, argv2, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--gang-scheduler"));
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 2, argv3, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--bogus"));
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 2, argv4, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--namespace needs a value"));
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 1, argv5, bad_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "CADRE_WORKERS"), "%s", buf_str(&err));
	options_release(&o);
	buf_release(&err);
}

Test(options, usage_lists_every_design_flag)
{
	const char *flags[] = { "--kubeconfig", "--namespace", "--workers", "--leader-elect",
				"--metrics-addr", "--health-addr", "--gang-scheduler",
				"--accelerator-label", "--default-image", "--cluster-domain",
				"--starvation-seconds", "--kube-api-qps", "--kube-api-burst",
				"--version", "--help", NULL };

	for (int i = 0; flags[i]; i++)
		cr_assert(strstr(options_usage(), flags[i]), "%s missing", flags[i]);
}

static const char *strict_env(const char *name)
{
	return strcmp(name, "CADRE_STARVATION_SECONDS") ? NULL : "0";
}

/* docs/gang-admission.md: 0 = strict order, negative = the guard off. */
Test(options, starvation_seconds_takes_zero_and_negative_values)
{
	struct options o;
	struct buf err;
	char *zero[] = { "cadre-controller", "--starvation-seconds", "0", NULL };
	char *negative[] = { "cadre-controller", "--starvation-seconds=-1", NULL };
	char *spaced[] = { "cadre-controller", "--starvation-seconds", "-30", NULL };
	char *none[] = { "cadre-controller", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 3, zero, no_env, &err), 0, "%s", buf_str(&err));
	cr_assert_eq(o.starvation_seconds, 0);
	options_release(&o);
	cr_assert_eq(options_parse(&o, 2, negative, no_env, &err), 0, "%s", buf_str(&err));
	cr_assert_eq(o.starvation_seconds, -1);
	options_release(&o);
	cr_assert_eq(options_parse(&o, 3, spaced, no_env, &err), 0, "%s", buf_str(&err));
	cr_assert_eq(o.starvation_seconds, -30);
	options_release(&o);
	cr_assert_eq(options_parse(&o, 1, none, strict_env, &err), 0, "%s", buf_str(&err));
	cr_assert_eq(o.starvation_seconds, 0);
	options_release(&o);
	buf_release(&err);
}

Test(options, counts_still_refuse_zero_and_negative_values)
{
	struct options o;
	struct buf err;
	char *workers[] = { "cadre-controller", "--workers=0", NULL };
	char *burst[] = { "cadre-controller", "--kube-api-burst=-5", NULL };
	char *seconds[] = { "cadre-controller", "--starvation-seconds=soon", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 2, workers, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--workers"), "%s", buf_str(&err));
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 2, burst, no_env, &err), CADRE_EINVAL);
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 2, seconds, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--starvation-seconds"), "%s", buf_str(&err));
	options_release(&o);
	buf_release(&err);
}

Test(options, native_gang_scheduler_is_a_mode)
{
	struct options o;
	struct buf err;
	char *argv[] = { "cadre-controller", "--gang-scheduler=native", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 2, argv, no_env, &err), 0, "%s", buf_str(&err));
	cr_assert_eq(o.gang_scheduler, GANG_NATIVE);
	cr_assert_str_eq(gang_mode_name(o.gang_scheduler), "native");
	options_release(&o);
	buf_release(&err);
}

static const char *domain_env(const char *name)
{
	return strcmp(name, "CADRE_CLUSTER_DOMAIN") ? NULL : "corp.example";
}

/* The domain goes into every pod's dnsConfig.searches: it must be a DNS name. */
Test(options, cluster_domain_comes_from_the_flag_or_the_environment_and_must_be_a_dns_name)
{
	struct options o;
	struct buf err;
	char *flag[] = { "cadre-controller", "--cluster-domain=k8s.internal", NULL };
	char *bad[] = { "cadre-controller", "--cluster-domain", "Cluster_Local", NULL };
	char *dotted[] = { "cadre-controller", "--cluster-domain=cluster.local.", NULL };
	char *none[] = { "cadre-controller", NULL };

	buf_init(&err, 1024);
	cr_assert_eq(options_parse(&o, 2, flag, domain_env, &err), 0, "%s", buf_str(&err));
	cr_assert_str_eq(o.cluster_domain, "k8s.internal");
	options_release(&o);
	cr_assert_eq(options_parse(&o, 1, none, domain_env, &err), 0, "%s", buf_str(&err));
	cr_assert_str_eq(o.cluster_domain, "corp.example");
	options_release(&o);
	cr_assert_eq(options_parse(&o, 3, bad, no_env, &err), CADRE_EINVAL);
	cr_assert(strstr(buf_str(&err), "--cluster-domain"), "%s", buf_str(&err));
	options_release(&o);
	buf_reset(&err);
	cr_assert_eq(options_parse(&o, 2, dotted, no_env, &err), CADRE_EINVAL);
	options_release(&o);
	buf_release(&err);
}
