#include <criterion/criterion.h>

#include "cli/cli.h"
#include "unit/support/clirun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TESTDATA CADRE_SOURCE_DIR "/unit/testdata/convert"

static char *out, *err;

static void teardown(void)
{
	free(out);
	free(err);
	out = err = NULL;
}

TestSuite(cli, .fini = teardown);

/* Run cadre with the words of line (split at spaces) in the test data directory. */
static int cadre(const char *line)
{
	return clirun(TESTDATA, line, NULL, &out, &err);
}

/* Exactly one line on stderr, holding text. */
static void assert_one_line(const char *text)
{
	cr_assert(strstr(err, text), "stderr: %s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
}

Test(cli, help_lists_commands_and_each_command_has_help_with_an_example)
{
	cr_assert_eq(cadre("--help"), CLI_EXIT_OK);
	cr_assert(strstr(out, "convert"), "%s", out);
	cr_assert(strstr(out, "--kubeconfig"), "%s", out);
	cr_assert_eq(cadre(""), CLI_EXIT_OK, "no command prints the help");
	cr_assert(strstr(out, "Usage: cadre <command>"), "%s", out);
	cr_assert_eq(cadre("convert --help"), CLI_EXIT_OK);
	cr_assert(strstr(out, "Usage: cadre convert FILE"), "%s", out);
	cr_assert(strstr(out, "Examples:\n  cadre convert train.sh"), "%s", out);
	cr_assert(strstr(out, "-n, --namespace"), "the global flags too: %s", out);
	cr_assert_eq(cadre("help convert"), CLI_EXIT_OK);
	cr_assert(strstr(out, "Usage: cadre convert FILE"), "%s", out);
	cr_assert_eq(cadre("-h convert"), CLI_EXIT_OK);
	cr_assert(strstr(out, "Usage: cadre convert FILE"), "%s", out);
}

Test(cli, global_flags_are_read_anywhere_in_every_form_kubectl_takes)
{
	static const char *const lines[] = {
		"-n ml convert volume.yaml", "convert volume.yaml -n ml", "convert -nml volume.yaml",
		"convert -n=ml volume.yaml", "--namespace=ml convert volume.yaml",
		"--namespace ml --context kind --kubeconfig /nonexistent convert volume.yaml",
		"convert --context=kind --kubeconfig=/x volume.yaml", "convert -- volume.yaml",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		cr_assert_eq(cadre(lines[i]), CLI_EXIT_OK, "%s: %s", lines[i], err);
		cr_assert(strstr(out, "kind: Volume"), "%s", lines[i]);
	}
}

Test(cli, bad_usage_is_one_line_and_exit_code_two)
{
	cr_assert_eq(cadre("frobnicate"), CLI_EXIT_USAGE);
	assert_one_line("unknown command \"frobnicate\"");
	cr_assert_eq(cadre("convert --frob volume.yaml"), CLI_EXIT_USAGE);
	assert_one_line("unknown flag: --frob");
	cr_assert_eq(cadre("--image x"), CLI_EXIT_USAGE, "--image belongs to convert");
	assert_one_line("unknown flag: --image");
	cr_assert_eq(cadre("convert volume.yaml -n"), CLI_EXIT_USAGE);
	assert_one_line("flag needs an argument");
	cr_assert_eq(cadre("convert --help=yes"), CLI_EXIT_USAGE);
	assert_one_line("takes no value");
	cr_assert_eq(cadre("convert"), CLI_EXIT_USAGE);
	assert_one_line("FILE is required");
	cr_assert_eq(cadre("convert train.sh task.yaml"), CLI_EXIT_USAGE);
	assert_one_line("one FILE at a time");
	cr_assert_eq(cadre("convert /nonexistent/train.sh"), CLI_EXIT_USAGE);
	assert_one_line("/nonexistent/train.sh: No such file or directory");
	cr_assert_str_eq(out, "", "nothing on stdout when it fails");
}

Test(cli, bad_input_names_the_file_line_and_option)
{
	char path[] = "/tmp/cadre-cli-XXXXXX";
	int fd = mkstemp(path);
	const char *script = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --time=soon\nsrun x\n";
	char line[256];

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, script, strlen(script)), (ssize_t)strlen(script));
	close(fd);
	snprintf(line, sizeof(line), "convert %s", path);
	cr_assert_eq(cadre(line), CLI_EXIT_USAGE);
	snprintf(line, sizeof(line), "%s:3: --time: \"soon\" is not a time", path);
	assert_one_line(line);
	cr_assert_str_eq(out, "");
	unlink(path);
}

/* The script of issue "Bad input": one Latin-1 byte once hung cadre convert forever. */
Test(cli, convert_reads_a_latin1_comment_and_names_the_line_and_column_of_any_other_byte,
     .timeout = 10)
{
	char path[] = "/tmp/cadre-cli-XXXXXX";
	int fd = mkstemp(path);
	const char *comment = "#!/bin/bash\n#SBATCH -N 2\n# r\xe9sultats\nsrun x\n";
	const char *command = "#!/bin/bash\n#SBATCH -N 2\nsrun x > r\xe9sultats\n";
	char line[256];

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, comment, strlen(comment)), (ssize_t)strlen(comment));
	snprintf(line, sizeof(line), "convert %s", path);
	cr_assert_eq(cadre(line), CLI_EXIT_OK, "%s", err);
	cr_assert(strstr(out, "  run: |\n    # r\xc3\xa9sultats\n    srun x\n"), "%s", out);
	snprintf(line, sizeof(line), "%s:3: comment not in UTF-8, read as Latin-1 (ISO 8859-1)\n",
		 path);
	cr_assert(strstr(err, line), "%s", err);

	cr_assert_eq(ftruncate(fd, 0), 0);
	cr_assert_eq(pwrite(fd, command, strlen(command), 0), (ssize_t)strlen(command));
	close(fd);
	snprintf(line, sizeof(line), "convert %s", path);
	cr_assert_eq(cadre(line), CLI_EXIT_USAGE);
	snprintf(line, sizeof(line), "%s:3:11: byte 0xE9 is not UTF-8", path);
	assert_one_line(line);
	cr_assert_str_eq(out, "");
	unlink(path);
}

Test(cli, convert_takes_the_image_flag_when_the_file_names_none)
{
	cr_assert_eq(cadre("convert train.sh --image nvcr.io/nvidia/pytorch:24.05-py3"), CLI_EXIT_OK);
	cr_assert(strstr(out, "  image: \"nvcr.io/nvidia/pytorch:24.05-py3\"\n"), "%s", out);
	cr_assert_null(strstr(err, "no image"), "%s", err);
	cr_assert(strstr(err, "train.sh:4: --gpus-per-node: no GPU type"), "%s", err);
}

Test(cli, convert_says_what_cadre_launch_would_upload_and_how_to_name_it_by_hand)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/cadre-task-XXXXXX");
	cr_assert_neq(mkstemp(path), -1);
	cr_assert(f = fopen(path, "w"));
	fputs("run: python train.py\nworkdir: .\nfile_mounts:\n  ~/.netrc: ./netrc\n", f);
	fclose(f);
	snprintf(line, sizeof(line), "convert %s", path);
	cr_assert_eq(cadre(line), CLI_EXIT_OK, "%s", err);
	cr_assert(strstr(out, "  workdir: /root/sky_workdir\n"), "%s", out);
	cr_assert_null(strstr(out, "code:"), "convert stores nothing: %s", out);
	snprintf(line, sizeof(line), "%s:2: workdir: . is not in this job: cadre launch uploads it "
		 "and unpacks it at /root/sky_workdir; with kubectl apply, `cadre push .`", path);
	cr_assert(strstr(err, line), "%s", err);
	snprintf(line, sizeof(line), "%s:4: file_mounts: ./netrc is not in this job", path);
	cr_assert(strstr(err, line), "%s", err);
	unlink(path);
}
