/* main.c - the `cadre` binary; everything is in cli_main (cli/cli.c). */
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv, stdout, stderr);
}
