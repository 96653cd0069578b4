/*
 * cli.c - `cadre <command> [flags]`: the flags, the commands, --help.
 *
 * Flags are read as pflag (kubectl's flag library) reads them, in one pass
 * over every word: the first word that is not a flag or a flag's value is
 * the command, the rest are its arguments, and "--" makes every later word
 * an argument. A flag that belongs to another command is unknown here.
 */
#include "cli/cli.h"
#include "cli/dashboard/dashboard.h"

#include <stdlib.h>
#include <string.h>

struct invocation {
	struct cli_globals g;
	const char *image;  /* convert and launch --image */
	const char *topology_level;  /* convert --topology-level */
	const char *name;   /* launch --name */
	const char *submit_timeout;  /* launch --submit-timeout */
	const char *cluster;         /* launch -c */
	const char *gpus;            /* launch --gpus */
	const char *node_selector;   /* launch --node-selector */
	const char *tolerations;     /* launch --toleration */
	const char *filename;        /* volumes -f */
	const char *max_upload;      /* launch and push --max-upload */
	bool no_upload;              /* launch --no-upload */
	bool help;
	const char *command;
	char **args;
	int n_args;
};

struct command {
	const char *name;
	const char *summary;
	const char *help;  /* usage, what it does, flags, an example */
	int (*run)(struct invocation *inv, FILE *out, FILE *err);
	bool raw;  /* reads its own flags: every word after it is an argument */
};

static int run_convert(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_convert(&inv->g, &(struct cli_convert_opts){ inv->image, inv->topology_level },
			   inv->args, inv->n_args, out, err);
}

static int run_sbatch(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_sbatch(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_launch(struct invocation *inv, FILE *out, FILE *err)
{
	struct cli_launch_opts o = { .image = inv->image, .name = inv->name,
				     .wait_timeout = inv->submit_timeout, .cluster = inv->cluster,
				     .gpus = inv->gpus, .node_selector = inv->node_selector,
				     .tolerations = inv->tolerations, .max_upload = inv->max_upload,
				     .no_upload = inv->no_upload };

	return cli_launch(&inv->g, &o, inv->args, inv->n_args, out, err);
}

static int run_push(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_push(&inv->g, inv->max_upload, inv->args, inv->n_args, out, err);
}

static int run_volumes(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_volumes(&inv->g, inv->filename, inv->args, inv->n_args, out, err);
}

static int run_squeue(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_squeue(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_scontrol(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_scontrol(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_sinfo(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_sinfo(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_queue(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_queue(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_sacct(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_sacct(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_scancel(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_scancel(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_down(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_down(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_status(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_status(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_salloc(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_salloc(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_completion(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_completion(inv->args, inv->n_args, out, err);
}

static int run_logs(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_logs(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_exec(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_exec(&inv->g, inv->args, inv->n_args, out, err);
}

static int run_dashboard(struct invocation *inv, FILE *out, FILE *err)
{
	return cli_dashboard(&inv->g, inv->args, inv->n_args, out, err);
}

/* Where the pods may run, for the submitting commands (cli/placement.c). */
#define PLACEMENT_FLAGS \
	"      --node-selector K=V[,K=V...]\n" \
	"                              run only on nodes with these labels\n" \
	"      --toleration KEY[=VALUE][:EFFECT][,...]\n" \
	"                              tolerate these taints (no VALUE: any value)\n"

#define DAILY_FLAGS \
	"      --namespace NS          the namespace (-n before the command; after it, -n\n" \
	"                              is the Slurm tool's own option)\n" \
	"  -A, --all-namespaces        every namespace\n" \
	"      --help                  this help\n"

static const struct command commands[] = {
	{ "convert", "a Slurm batch script or SkyPilot YAML as a TrainingJob or Volume",
	  "Usage: cadre convert FILE [--image IMG] [--topology-level LABEL]\n"
	  "\n"
	  "Reads a Slurm batch script (#SBATCH lines), a SkyPilot task.yaml or a SkyPilot\n"
	  "volume file and prints the TrainingJob or Volume it becomes on stdout. Whatever\n"
	  "cannot be honoured is listed on stderr as FILE:LINE: message. FILE - reads stdin.\n"
	  "\n"
	  "Flags:\n"
	  "      --image IMG   the image when the file names none (#SBATCH --container-image,\n"
	  "                    resources.image_id); else the controller's --default-image\n"
	  "      --topology-level LABEL  the node label #SBATCH --switches and --segment\n"
	  "                    mean (a leaf switch, an NVLink domain); cadre sbatch reads it\n"
	  "                    from the cluster's ClusterTopology (defaultLevel)\n"
	  "\n"
	  "Examples:\n"
	  "  cadre convert train.sh --image nvcr.io/nvidia/pytorch:24.05-py3 > job.yaml\n"
	  "  cadre convert task.yaml | kubectl apply -f -\n"
	  "  cadre convert volume.yaml | kubectl apply -f -\n",
	  run_convert, false },
	{ "sbatch", "submit a Slurm batch script; prints Submitted batch job <id>",
	  "Usage: cadre sbatch [sbatch options] SCRIPT\n"
	  "\n"
	  "Submits the batch script as a TrainingJob, as sbatch submits it: the options on\n"
	  "the command line are read after the script's #SBATCH lines, so they win. Every\n"
	  "option form #SBATCH takes works here too (-N 2, -N2, --nodes=2, --time 1:00).\n"
	  "What cannot be honoured is listed on stderr as FILE:LINE: message (\"command\n"
	  "line:\" for the command line's options). Once the controller has given the job\n"
	  "its id, prints \"Submitted batch job <id>\". The job is named by --job-name/-J,\n"
	  "else after the script (train.sh: train). Slurm's job names need not be unique:\n"
	  "when a TrainingJob of that name exists, the new one is named apart (NAME-xxxxx,\n"
	  "a note says so) and keeps NAME as its Slurm name (squeue, singleton).\n"
	  "\n"
	  "The image: --container-image (here or #SBATCH), else --image, else the\n"
	  "defaultImage of the job's Partition (-p, else the default one), else the\n"
	  "controller's --default-image; a note says which one applies. Where the pods\n"
	  "may run: --node-selector and --toleration, written into the job's podTemplate.\n"
	  "\n"
	  "Before submitting, the cluster is asked as slurmctld checks a job: a partition\n"
	  "that does not exist is \"sbatch: error: invalid partition specified: NAME\",\n"
	  "a time limit past its MaxTime and a --dependency on a job that does not exist\n"
	  "are refused, and nothing is submitted (exit 1).\n"
	  "\n"
	  "The submit directory goes with the job: the working directory (or --chdir's),\n"
	  "minus .git and what .gitignore leaves out (a .cadreignore or .skyignore at its\n"
	  "root replaces .gitignore), is uploaded to the namespace once per content and\n"
	  "unpacked in every pod at the same absolute path, where the script runs\n"
	  "(SLURM_SUBMIT_DIR). Not when --chdir lies on one of the job's Volumes.\n"
	  "\n"
	  "Flags (besides sbatch's own):\n"
	  "      --parsable              print the job id alone\n"
	  "  -W, --wait                  wait for the job to end; exit with its exit code\n"
	  "      --no-upload             send no code: it is in the image or on a Volume\n"
	  "      --max-upload SIZE       the cap on the compressed code (default 32M, at\n"
	  "                              most 128M)\n"
	  "      --image IMG             the image when the script names none\n"
	  "      --topology-level LABEL  the node label --switches and --segment mean\n"
	  "                              (default: the ClusterTopology's defaultLevel)\n"
	  "      --submit-timeout SECS   wait this long for the job id (default 30)\n"
	  PLACEMENT_FLAGS
	  "      --namespace NS          the namespace (-n is sbatch's --ntasks here; -n\n"
	  "                              before \"sbatch\" is the namespace)\n"
	  "\n"
	  "Examples:\n"
	  "  cadre sbatch train.sh\n"
	  "  cadre sbatch -N 4 --time=2:00:00 --container-image=nvcr.io#nvidia/pytorch:24.05-py3 train.sh\n"
	  "  JOB=$(cadre sbatch --parsable train.sh)\n"
	  "  cadre sbatch -p gpu --array=0-9%2 --dependency=afterok:$JOB sweep.sh\n"
	  "  cadre sbatch --node-selector pool=a100 --toleration pool=a100:NoSchedule train.sh\n",
	  run_sbatch, true },
	{ "launch", "submit a SkyPilot task.yaml; prints Submitted job <name> (jobId <id>)",
	  "Usage: cadre launch TASK.yaml [--image IMG] [--name NAME] [--node-selector K=V]\n"
	  "                              [--toleration KEY[=VALUE][:EFFECT]]\n"
	  "       cadre launch -c NAME [--gpus TYPE[:N]] [--image IMG] [TASK.yaml]\n"
	  "\n"
	  "Submits the SkyPilot task as a TrainingJob (as sky jobs launch does) and, once the\n"
	  "controller has given it its id, prints \"Submitted job <name> (jobId <id>)\".\n"
	  "What cannot be honoured is listed on stderr as FILE:LINE: message. The job is\n"
	  "named --name, else the task's name, else after the file; it must not exist yet.\n"
	  "\n"
	  "workdir and every file_mounts entry whose source is a local file or directory\n"
	  "go with the job, as sky launch syncs them: uploaded to the namespace once per\n"
	  "content (minus .git and what .gitignore, or a root .skyignore or .cadreignore,\n"
	  "leaves out) and unpacked in every pod before setup, workdir at ~/sky_workdir\n"
	  "(/root/sky_workdir), where setup and run start. Buckets are not fetched.\n"
	  "\n"
	  "With -c NAME, as sky launch -c: a cluster named NAME that stays up, as a dev node:\n"
	  "a TrainingJob NAME (label cadre.dev/cluster) that runs the task's setup and run,\n"
	  "if a task is given, and then holds its pods. It waits until the cluster is UP.\n"
	  "cadre exec NAME CMD (or TASK.yaml) runs on it, cadre status lists the clusters,\n"
	  "cadre down NAME ends it. --gpus sets the accelerators per node (H100:1).\n"
	  "\n"
	  "Flags:\n"
	  "      --image IMG             the image when the task names none (image_id);\n"
	  "                              else the controller's --default-image\n"
	  "      --name NAME             the job's name (a DNS label)\n"
	  "      --submit-timeout SECS   wait this long for the job id (default 30)\n"
	  "  -c, --cluster NAME          a cluster that stays up (sky launch -c)\n"
	  "      --gpus TYPE[:N]         with -c: the accelerators per node\n"
	  "      --no-upload             send neither workdir nor file_mounts\n"
	  "      --max-upload SIZE       the cap on each compressed upload (default 32M, at\n"
	  "                              most 128M)\n"
	  PLACEMENT_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre launch task.yaml --image nvcr.io/nvidia/pytorch:24.05-py3\n"
	  "  cadre -n ml launch task.yaml --name llama-ft-2\n"
	  "  cadre launch -c dev-node --gpus H100:1 --image nvcr.io/nvidia/pytorch:24.05-py3\n",
	  run_launch, false },
	{ "push", "upload a directory as a code bundle; prints its digest for spec.code",
	  "Usage: cadre push DIR [--max-upload SIZE]\n"
	  "\n"
	  "Packs DIR (minus .git and what .gitignore leaves out; a .cadreignore or\n"
	  ".skyignore at its root replaces .gitignore), stores it in the namespace as\n"
	  "ConfigMaps labelled cadre.dev/code, unless the same content is there already,\n"
	  "and prints its digest. A TrainingJob committed to Git names it in spec.code,\n"
	  "and every pod unpacks it at path before setup:\n"
	  "  code: [{digest: \"sha256:...\", path: /workspace/proj}]\n"
	  "A bundle no job uses is deleted after an hour; one that only finished jobs\n"
	  "use, after the controller's --code-retention.\n"
	  "\n"
	  "Flags:\n"
	  "      --max-upload SIZE       the cap on the compressed bundle (default 32M, at\n"
	  "                              most 128M)\n"
	  "\n"
	  "Examples:\n"
	  "  cadre push .\n"
	  "  cadre -n ml push ~/proj --max-upload 64M\n",
	  run_push, false },
	{ "volumes", "apply a SkyPilot volume file as a Volume",
	  "Usage: cadre volumes apply -f VOLUME.yaml\n"
	  "\n"
	  "Creates the Volume of a SkyPilot volume file, or updates it when it exists\n"
	  "(server-side apply, field manager cadre-cli), and prints volume/<name> created,\n"
	  "configured or unchanged, as kubectl apply does.\n"
	  "\n"
	  "Flags:\n"
	  "  -f, --filename FILE   the SkyPilot volume file (- reads stdin)\n"
	  "\n"
	  "Examples:\n"
	  "  cadre volumes apply -f volume.yaml\n"
	  "  cadre -n ml volumes apply -f ckpt.yaml\n",
	  run_volumes, false },
	{ "squeue", "the jobs that have not ended, as squeue prints them",
	  "Usage: cadre squeue [-u USER[,...]] [--me] [-j ID[,...]] [-n NAME[,...]] [-t STATE[,...]]\n"
	  "                    [-l] [-o FORMAT] [-h] [--json]\n"
	  "\n"
	  "Prints the TrainingJobs of the namespace with squeue's default columns and widths:\n"
	  "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON). A job waiting to start\n"
	  "shows why as (Reason): Resources, Priority, QOSWaitingForKueue, VolumeNotBound, ...\n"
	  "USER is who submitted it (cadre sbatch records it), else the namespace; PARTITION\n"
	  "is the job's Partition, else spec.queue. An array's elements waiting to start are\n"
	  "one row, 123_[4-99%8], and each started element its own, 123_3. Pending,\n"
	  "configuring, running, requeued, suspended and completing jobs are shown unless\n"
	  "the states say otherwise (-t all: every job). SQUEUE_FORMAT is read as squeue\n"
	  "reads it.\n"
	  "\n"
	  "Flags:\n"
	  "  -u, --user LIST             jobs of these users\n"
	  "      --me                    jobs of the user the API server says you are\n"
	  "  -j, --jobs LIST             these job ids (an array's id: all its elements;\n"
	  "                              123_4: one element)\n"
	  "  -n, --name LIST             these job names\n"
	  "  -t, --states LIST           these states (PD,R or PENDING,RUNNING; all)\n"
	  "  -l, --long                  squeue -l's columns (STATE, TIME_LIMIT)\n"
	  "  -o, --format FORMAT         squeue's %[.][WIDTH]FIELD: %i %P %j %u %t %T %M %l\n"
	  "                              %D %R %N %r %a (\".\" right-justifies)\n"
	  "  -h, --noheader              no header line\n"
	  "      --json                  {\"jobs\": [...]} with Slurm's field names\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre squeue --me\n"
	  "  cadre squeue -t PD -o \"%.18i %.8j %.10M %R\"\n",
	  run_squeue, true },
	{ "scontrol", "show a job, hold, release, requeue or update it, as scontrol does",
	  "Usage: cadre scontrol show job [ID]\n"
	  "       cadre scontrol show partition [NAME]\n"
	  "       cadre scontrol show hostnames [HOSTLIST]\n"
	  "       cadre scontrol hold|release|requeue ID[,ID...]...\n"
	  "       cadre scontrol update JobId=ID TimeLimit=TIME\n"
	  "\n"
	  "show job prints the job (a Slurm job id, ARRAY_INDEX, or a name; every job\n"
	  "without one) in scontrol's key=value layout. hold keeps a job that has not been\n"
	  "admitted from starting (spec.suspend: true; squeue shows PD (JobHeldUser)), as\n"
	  "Slurm holds only pending jobs; release lets it go. requeue stops an admitted job's\n"
	  "gang and queues it again (the annotation cadre.dev/requeue). update TimeLimit\n"
	  "sets spec.activeDeadlineSeconds (a Slurm time, or UNLIMITED); no other field of\n"
	  "a submitted job is changed here. show partition prints each Partition (or the\n"
	  "one named) as scontrol does; AllowAccounts lists its allowedNamespaces. show\n"
	  "hostnames expands a hostlist (default $SLURM_JOB_NODELIST), one host a line.\n"
	  "\n"
	  "Flags:\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre scontrol show job 4242\n"
	  "  cadre scontrol hold 4243\n"
	  "  cadre scontrol update JobId=4242 TimeLimit=2:00:00\n",
	  run_scontrol, true },
	{ "sinfo", "the partitions and their nodes, as sinfo prints them",
	  "Usage: cadre sinfo [-N] [-l] [-p PARTITION[,...]] [-t STATE[,...]] [-o FORMAT] [-h]\n"
	  "                   [--json] [--topology]\n"
	  "\n"
	  "Prints the Partitions and their nodes with sinfo's default columns and widths:\n"
	  "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST, one row per partition and node\n"
	  "state, \"*\" after the default partition, node names compressed as Slurm writes\n"
	  "hostlists (gpu-node-[0-3]). A node is in a partition when it has every label of\n"
	  "the partition's nodeSelector. Its state: down (Ready False; down* when the kubelet\n"
	  "stopped answering), drain or drng (cordoned), alloc, mix or idle (how many of its\n"
	  "GPUs the pods on it hold; a node without GPUs, its CPUs held by cadre's pods).\n"
	  "TIMELIMIT is the partition's maxTime. GRES (%G) is gpu:TYPE:COUNT (gpu:h100:8).\n"
	  "SINFO_FORMAT is read as sinfo reads it. Reads Partitions and Nodes (the ClusterRole\n"
	  "cadre-cluster-view, docs/install.md) and the Pods of every namespace (the ClusterRole\n"
	  "cadre-cluster-usage); without the pods, an up node's state is unk.\n"
	  "\n"
	  "Flags:\n"
	  "  -N, --Node                  one row per node and partition\n"
	  "  -l, --long                  sinfo -l's columns, after the date\n"
	  "  -p, --partition LIST        these partitions\n"
	  "  -t, --states LIST           nodes in these states (idle, mix, alloc, drain,\n"
	  "                              down, ...)\n"
	  "  -o, --format FORMAT         sinfo's %[.][WIDTH]FIELD: %P %R %a %l %L %D %t %T\n"
	  "                              %N %c %m %G %F %A %s %r %h %g %z %d %w %f %E %i\n"
	  "                              %p, and cadre's %y (TOPOLOGY)\n"
	  "                              (\".\" right-justifies, \"#\" sinfo's computed width)\n"
	  "  -h, --noheader              no header line\n"
	  "      --json                  {\"sinfo\": [...]} with Slurm's field names\n"
	  "      --topology              a TOPOLOGY column: each node's domains of the\n"
	  "                              ClusterTopology's levels (block=b1,rack=r2), one\n"
	  "                              row per domain\n"
	  "\n"
	  "Examples:\n"
	  "  cadre sinfo\n"
	  "  cadre sinfo --topology\n"
	  "  cadre sinfo -N -l\n"
	  "  cadre sinfo -p gpu -o \"%P %D %t %G %N\"\n",
	  run_sinfo, true },
	{ "queue", "the jobs as sky jobs queue prints them",
	  "Usage: cadre queue\n"
	  "\n"
	  "Prints every TrainingJob of the namespace, newest first, as sky jobs queue does:\n"
	  "ID NAME RESOURCES SUBMITTED TOT. DURATION JOB DURATION #RECOVERIES STATUS.\n"
	  "TOT. DURATION runs from the submission, JOB DURATION from the start;\n"
	  "#RECOVERIES counts the requeues after node loss, eviction or preemption.\n"
	  "\n"
	  "Flags:\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre queue\n"
	  "  cadre queue -A\n",
	  run_queue, true },
	{ "sacct", "running and finished jobs with State and ExitCode, as sacct prints them",
	  "Usage: cadre sacct [-j ID[,...]] [-o FIELD[%WIDTH],...] [-p|-P] [-n] [-s STATE[,...]]\n"
	  "                   [-u USER[,...]]\n"
	  "\n"
	  "Prints the TrainingJobs the API server still holds with sacct's default fields\n"
	  "(JobID JobName Partition Account AllocCPUS State ExitCode) and widths. State is\n"
	  "PENDING, RUNNING, REQUEUED, COMPLETED, FAILED, TIMEOUT, CANCELLED, ...; ExitCode\n"
	  "is exit:signal. Account is the namespace. An array's started elements are\n"
	  "listed one by one (123_4), its elements not started yet as 123_[5-9].\n"
	  "\n"
	  "Flags:\n"
	  "  -j, --jobs LIST             these job ids\n"
	  "  -o, --format LIST           the fields: JobID JobIDRaw JobName Partition Account\n"
	  "                              User AllocCPUS NNodes NodeList State ExitCode Elapsed\n"
	  "                              Timelimit Submit Start End, each with %WIDTH\n"
	  "  -p, --parsable              \"|\" after every field\n"
	  "  -P, --parsable2             \"|\" between fields\n"
	  "  -n, --noheader              no header\n"
	  "  -s, --state LIST            these states (CD,F or COMPLETED,FAILED)\n"
	  "  -u, --user LIST             jobs of these users\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre sacct -j 4242\n"
	  "  cadre sacct -o JobID,State --parsable2 -j 4242\n",
	  run_sacct, true },
	{ "scancel", "cancel jobs by Slurm job id or name, or signal their programs",
	  "Usage: cadre scancel [-s|--signal SIG] [-u USER[,...]] [-t STATE[,...]] [ID|NAME...]\n"
	  "\n"
	  "Deletes each TrainingJob named by its Slurm job id (status.jobId) or its name;\n"
	  "its pods are stopped. An array's id cancels every element; ARRAY_INDEX (123_4)\n"
	  "one element, started or not. An id or name that is not a job of the namespace is\n"
	  "an error, as in scancel, and the others are still cancelled. With -u or -t and no\n"
	  "job named, every job of those users in those states. Prints nothing when every\n"
	  "job was cancelled.\n"
	  "\n"
	  "With --signal the jobs are not deleted: SIG goes to the program on every running\n"
	  "rank (the job's run and the processes it started), through exec, as scancel\n"
	  "--signal sends it to a job's steps.\n"
	  "\n"
	  "Flags:\n"
	  "  -s, --signal SIG            send SIG (USR1, SIGUSR1, 10, TERM, ...) instead of\n"
	  "                              cancelling\n"
	  "  -u, --user LIST             the jobs of these users\n"
	  "  -t, --state LIST            the jobs in these states (PD,R or PENDING,RUNNING)\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre scancel 4242\n"
	  "  cadre scancel llama-pretrain 4243\n"
	  "  cadre scancel --signal=USR1 4242\n"
	  "  cadre scancel 4242_7\n"
	  "  cadre scancel -u alice -t PD\n",
	  run_scancel, true },
	{ "logs", "every rank's log, each line prefixed by its rank",
	  "Usage: cadre logs ID|NAME [-f] [--rank R] [--attempt N] [--tail N] [--since T]\n"
	  "                  [--limit-bytes N] [--timestamps]\n"
	  "\n"
	  "Prints the container log of every rank of the job (its Slurm job id or name),\n"
	  "read through the API server, merged in time order, each line prefixed \"N: \" by\n"
	  "its rank as srun --label prints it. The latest attempt's pods unless --attempt\n"
	  "says which (a restart makes a new attempt). The ranks' logs are streamed and\n"
	  "merged as they arrive, so a log of any size takes the same memory.\n"
	  "\n"
	  "With -f the logs are followed as they grow; the pods of a restart are followed as\n"
	  "they start, and the command ends when the job ends (or on Ctrl-C).\n"
	  "\n"
	  "Flags:\n"
	  "  -f, --follow                follow the logs until the job ends\n"
	  "      --rank R                only these ranks: 3, 0-3, 0,2,5-7\n"
	  "      --attempt N             the pods of attempt N (0: the first run)\n"
	  "      --tail N                the last N lines of each rank\n"
	  "      --since T               lines newer than T: a duration (90s, 10m, 1h30m) or\n"
	  "                              an RFC 3339 time (2026-12-01T10:00:00Z)\n"
	  "      --limit-bytes N         at most N bytes of each rank's log\n"
	  "      --timestamps            each line's time after its rank\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre logs 4242\n"
	  "  cadre logs -f llama-pretrain --rank 0\n"
	  "  cadre logs 4242 --rank 0-3 --since 10m --timestamps\n",
	  run_logs, true },
	{ "exec", "run a command on every rank, or a shell on one",
	  "Usage: cadre exec ID|NAME [--rank N] [-it] -- COMMAND [ARG...]\n"
	  "       cadre exec CLUSTER COMMAND [ARG...] | TASK.yaml\n"
	  "\n"
	  "Runs COMMAND in the container of every running rank of the job (or of rank N)\n"
	  "through the API server's pods/exec (WebSocket, v5.channel.k8s.io), all ranks at\n"
	  "once. Each line of output is prefixed \"N: \" by its rank (stdout to stdout,\n"
	  "stderr to stderr). The exit code is the highest of the ranks' exit codes.\n"
	  "\n"
	  "With -it: COMMAND on one rank (--rank, default 0) with a terminal: the local\n"
	  "terminal is put in raw mode (and restored on exit), its size follows the window,\n"
	  "the output is not prefixed, and the exit code is the command's.\n"
	  "\n"
	  "As sky exec: without \"--\" the command is the words after the job (or cluster);\n"
	  "a single TASK.yaml runs that task's run (bash -c) on every rank.\n"
	  "\n"
	  "Flags:\n"
	  "      --rank N                only rank N\n"
	  "  -i, --stdin                 send stdin to the command (one rank)\n"
	  "  -t, --tty                   with -i: a terminal\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre exec 4242 -- nvidia-smi -L\n"
	  "  cadre exec llama-pretrain --rank 1 -it -- bash\n"
	  "  cadre exec dev-node python train.py\n",
	  run_exec, true },
	{ "status", "one job as a person reads it: state and why, times, ranks, conditions",
	  "Usage: cadre status [ID|NAME]\n"
	  "\n"
	  "Without a job: the clusters of cadre launch -c, as sky status lists them (NAME\n"
	  "INFRA RESOURCES STATUS AUTOSTOP LAUNCHED; STATUS is INIT until the pods run, UP,\n"
	  "STOPPED once the job ended).\n"
	  "\n"
	  "Prints one TrainingJob, named by its Slurm job id or its name: its state and why it\n"
	  "waits, resources, queue, times, restarts, the last failure, the host names, every\n"
	  "rank with its pod, node, IP and phase, and the conditions.\n"
	  "\n"
	  "Flags:\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre status 4242\n"
	  "  cadre status llama-pretrain\n"
	  "  cadre status\n",
	  run_status, true },
	{ "down", "end a cluster of cadre launch -c, as sky down",
	  "Usage: cadre down NAME...\n"
	  "\n"
	  "Deletes each cluster cadre launch -c NAME made (its TrainingJob and pods) and\n"
	  "prints \"Terminating cluster NAME...done.\" as sky down does. A name that is no\n"
	  "cluster (a job: cadre scancel ends it) is an error, and the others still end.\n"
	  "\n"
	  "Flags:\n"
	  DAILY_FLAGS
	  "\n"
	  "Examples:\n"
	  "  cadre down dev-node\n",
	  run_down, true },
	{ "salloc", "an interactive allocation: nodes held, a shell here with SLURM_* set",
	  "Usage: cadre salloc [sbatch options] [COMMAND [ARGS...]]\n"
	  "\n"
	  "Asks for an allocation as salloc does: a TrainingJob whose run only waits, so it\n"
	  "holds its nodes until it is cancelled or its time limit (--time) ends it. Waits\n"
	  "until the job runs, saying so on stderr in salloc's words (\"Pending job allocation\n"
	  "N\", \"job N queued and waiting for resources\", \"Granted job allocation N\"), and\n"
	  "prints the command that reaches its nodes (cadre exec JOB -it -- bash). Then runs\n"
	  "COMMAND, else $SHELL, here, with the job's SLURM_JOB_ID, SLURM_JOB_NODELIST,\n"
	  "SLURM_NNODES, SLURM_JOB_NAME, ... When it exits the job is deleted (\"Relinquishing\n"
	  "job allocation N\") and salloc exits with its exit code. Ctrl-C while waiting, or\n"
	  "SIGTERM or SIGHUP at any time, cancels the job as well.\n"
	  "\n"
	  "The options are sbatch's, read as cadre sbatch reads them (-N 2, --gpus-per-node=8,\n"
	  "--time=1:00:00, -J NAME, --partition=QUEUE, --container-image=IMG, ...); the words\n"
	  "from the first one that is not an option on are the command. The job is named\n"
	  "--job-name/-J, else after the command with a random suffix (bash-x7k2p).\n"
	  "\n"
	  "Flags (besides sbatch's own):\n"
	  "      --image IMG             the image when --container-image names none\n"
	  "      --submit-timeout SECS   wait this long for the job id (default 30)\n"
	  PLACEMENT_FLAGS
	  "      --namespace NS          the namespace (-n is sbatch's --ntasks here; -n\n"
	  "                              before \"salloc\" is the namespace)\n"
	  "\n"
	  "Examples:\n"
	  "  cadre salloc -N 2 --gpus-per-node=h100:8 --time=1:00:00 --image nvcr.io/nvidia/pytorch:24.05-py3\n"
	  "  cadre salloc -N 1 --image img:1 -- python3 debug.py --steps 10\n",
	  run_salloc, true },
	{ "completion", "the shell completion script for bash or zsh",
	  "Usage: cadre completion bash|zsh\n"
	  "\n"
	  "Prints a script that makes the shell complete cadre's commands, their flags\n"
	  "(sbatch's options for sbatch and salloc) and, after scancel, status, logs and exec,\n"
	  "the ids and names of the namespace's jobs.\n"
	  "\n"
	  "Examples:\n"
	  "  source <(cadre completion bash)         # in ~/.bashrc\n"
	  "  source <(cadre completion zsh)          # in ~/.zshrc, after compinit\n"
	  "  cadre completion zsh > \"${fpath[1]}/_cadre\"\n",
	  run_completion, false },
	{ "dashboard", CLI_DASHBOARD_SUMMARY, CLI_DASHBOARD_HELP, run_dashboard, true },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char global_help[] =
	"Global flags (as kubectl reads them):\n"
	"      --kubeconfig FILE   the kubeconfig (default $KUBECONFIG, then ~/.kube/config)\n"
	"      --context NAME      the kubeconfig context (default its current-context)\n"
	"  -n, --namespace NS      the namespace (default the context's)\n"
	"  -h, --help              help for cadre or a command\n";

static void usage(FILE *f)
{
	fputs("cadre runs Slurm and SkyPilot jobs on Kubernetes.\n\n"
	      "Usage: cadre <command> [flags]\n\nCommands:\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n%s\nUse \"cadre <command> --help\" for more about a command.\n", global_help);
}

/* Every flag; commands NULL for the global ones, else the commands that take it. */
struct flag_def {
	struct cli_flag flag;
	const char *command;  /* space-separated */
};

static int parse_flag(struct invocation *inv, const struct flag_def *defs, size_t n_defs,
		      int argc, char **argv, int *i, FILE *err)
{
	const char *a = argv[*i], *value = NULL, *eq;
	bool is_long = a[1] == '-';
	size_t len;

	a += is_long ? 2 : 1;
	eq = strchr(a, '=');
	len = is_long ? (eq ? (size_t)(eq - a) : strlen(a)) : 1;
	for (size_t k = 0; k < n_defs; k++) {
		const struct cli_flag *f = &defs[k].flag;

		if (is_long ? strlen(f->name) != len || strncmp(f->name, a, len) :
			      f->short_name != a[0])
			continue;
		if (f->set) {
			if ((is_long && eq) || (!is_long && a[1])) {
				fprintf(err, "cadre: flag %s%s takes no value\n", is_long ? "--" : "-",
					is_long ? f->name : (char[]){ a[0], 0 });
				return -1;
			}
			*f->set = true;
			return (int)k;
		}
		value = is_long ? (eq ? eq + 1 : NULL) : (a[1] ? a + 1 + (a[1] == '=') : NULL);
		if (!value && *i + 1 < argc)
			value = argv[++*i];
		if (!value) {
			fprintf(err, "cadre: flag needs an argument: %s\n", argv[*i]);
			return -1;
		}
		*f->value = value;
		return (int)k;
	}
	fprintf(err, "cadre: unknown flag: %.*s\n", (int)(len + (is_long ? 2 : 1)), argv[*i]);
	return -1;
}

static bool is_raw(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].raw;
	return false;
}

/* Whether word is one of the space-separated words of list. */
static bool word_in(const char *word, const char *list)
{
	size_t len = strlen(word);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, " ");

		if (n == len && !strncmp(p, word, n))
			return true;
		p += n + (p[n] == ' ');
	}
	return false;
}

/* One pass over argv: flags anywhere, the command, its arguments. */
static int parse_args(struct invocation *inv, int argc, char **argv, FILE *err)
{
	const struct flag_def defs[] = {
		{ { "kubeconfig", 0, &inv->g.kubeconfig, NULL }, NULL },
		{ { "context", 0, &inv->g.context, NULL }, NULL },
		{ { "namespace", 'n', &inv->g.namespace, NULL }, NULL },
		{ { "help", 'h', NULL, &inv->help }, NULL },
		{ { "image", 0, &inv->image, NULL }, "convert launch" },
		{ { "topology-level", 0, &inv->topology_level, NULL }, "convert" },
		{ { "name", 0, &inv->name, NULL }, "launch" },
		{ { "submit-timeout", 0, &inv->submit_timeout, NULL }, "launch" },
		{ { "cluster", 'c', &inv->cluster, NULL }, "launch" },
		{ { "gpus", 0, &inv->gpus, NULL }, "launch" },
		{ { "node-selector", 0, &inv->node_selector, NULL }, "launch" },
		{ { "toleration", 0, &inv->tolerations, NULL }, "launch" },
		{ { "filename", 'f', &inv->filename, NULL }, "volumes" },
		{ { "max-upload", 0, &inv->max_upload, NULL }, "launch push" },
		{ { "no-upload", 0, NULL, &inv->no_upload }, "launch" },
	};
	const char *used[sizeof(defs) / sizeof(defs[0])] = { 0 };
	bool dashdash = false;

	if (!(inv->args = calloc((size_t)argc + 1, sizeof(*inv->args))))
		return -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;

		if (inv->command && is_raw(inv->command)) {
			inv->args[inv->n_args++] = argv[i];
		} else if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
		} else if (!dashdash && a[0] == '-' && a[1]) {
			if ((k = parse_flag(inv, defs, sizeof(defs) / sizeof(defs[0]), argc, argv,
					    &i, err)) < 0)
				return -1;
			used[k] = a;
		} else if (!inv->command) {
			inv->command = a;
		} else {
			inv->args[inv->n_args++] = argv[i];
		}
	}
	for (size_t k = 0; k < sizeof(defs) / sizeof(defs[0]); k++) {
		if (used[k] && defs[k].command &&
		    (!inv->command || !word_in(inv->command, defs[k].command))) {
			fprintf(err, "cadre: unknown flag: --%s\n", defs[k].flag.name);
			return -1;
		}
	}
	return 0;
}

bool cli_command_at(size_t i, const char **name, const char **summary, const char **help)
{
	if (i >= N_COMMANDS)
		return false;
	*name = commands[i].name;
	*summary = commands[i].summary;
	*help = commands[i].help;
	return true;
}

void cli_print_help(FILE *f, const char *cmd)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(cmd, commands[i].name))
			fprintf(f, "%s\n%s", commands[i].help, global_help);
}

int cli_main(int argc, char **argv, FILE *out, FILE *err)
{
	struct invocation inv = { .n_args = 0 };
	const struct command *cmd = NULL;
	int code = CLI_EXIT_USAGE;

	if (parse_args(&inv, argc, argv, err))
		goto out;
	if (inv.command && !strcmp(inv.command, "help")) {
		inv.help = true;
		inv.command = inv.n_args ? inv.args[0] : NULL;
	}
	for (size_t i = 0; inv.command && i < N_COMMANDS; i++)
		if (!strcmp(inv.command, commands[i].name))
			cmd = &commands[i];
	if (inv.command && !cmd) {
		fprintf(err, "cadre: unknown command \"%s\" (see cadre --help)\n", inv.command);
		goto out;
	}
	if (!cmd) {
		usage(out);
		code = CLI_EXIT_OK;
		goto out;
	}
	if (inv.help) {
		fprintf(out, "%s\n%s", cmd->help, global_help);
		code = CLI_EXIT_OK;
		goto out;
	}
	code = cmd->run(&inv, out, err);
out:
	free(inv.args);
	return code;
}
