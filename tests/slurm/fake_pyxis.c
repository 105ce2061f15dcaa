/*
 * fake_pyxis: a SPANK plugin for sbatchlint's test cluster.
 *
 * Pyxis is not packaged for Debian, so a plain Slurm rejects its options
 * ("unrecognized option '--container-image=...'"). This plugin registers the
 * same option names, with the same "takes an argument or not" shape, and does
 * nothing with them: sbatch and srun accept the options, and the tasks run on
 * the host, outside any container. As a probe, it tells each task what the
 * remote side received (FAKE_PYXIS_REMOTE_<OPTION>, see below).
 *
 * Built by start-cluster.sh:  gcc -shared -fPIC -o fake_pyxis.so fake_pyxis.c
 * Loaded through plugstack.conf in every context (sbatch/salloc, srun,
 * slurmstepd), so an option given on sbatch or srun is known on both sides.
 */
#include <stddef.h>
#include <slurm/spank.h>

SPANK_PLUGIN(fake_pyxis, 1);

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_OPTIONS 15

/*
 * What the remote side (slurmstepd, where the real pyxis builds the container)
 * received for each option, every value in arrival order joined by '|'. Tasks
 * see it as FAKE_PYXIS_REMOTE_<OPTION> (dashes as underscores, upper case):
 * the probe that shows how many values of a repeated option reach pyxis.
 */
static char *received[FAKE_OPTIONS];

/* Every option is accepted; nothing is done with it but the record above. */
static int ignore_option(int val, const char *optarg, int remote)
{
	char *joined;
	size_t length;

	if (!remote || val < 0 || val >= FAKE_OPTIONS)
		return 0;
	if (optarg == NULL)
		optarg = "";
	length = strlen(optarg) + 1 + (received[val] ? strlen(received[val]) + 1 : 0);
	joined = malloc(length);
	if (joined == NULL)
		return 0;
	if (received[val])
		snprintf(joined, length, "%s|%s", received[val], optarg);
	else
		snprintf(joined, length, "%s", optarg);
	free(received[val]);
	received[val] = joined;
	return 0;
}

struct fake_option {
	const char *name;
	const char *arginfo; /* NULL: a flag without an argument */
	const char *usage;
};

static const struct fake_option fake_options[] = {
	{ "container-image", "IMAGE", "[fake pyxis] accepted and ignored" },
	{ "container-mounts", "SRC:DST[:FLAGS][,...]", "[fake pyxis] accepted and ignored" },
	{ "container-workdir", "PATH", "[fake pyxis] accepted and ignored" },
	{ "container-name", "NAME", "[fake pyxis] accepted and ignored" },
	{ "container-save", "PATH", "[fake pyxis] accepted and ignored" },
	{ "container-env", "NAME[,NAME...]", "[fake pyxis] accepted and ignored" },
	{ "container-mount-home", NULL, "[fake pyxis] accepted and ignored" },
	{ "no-container-mount-home", NULL, "[fake pyxis] accepted and ignored" },
	{ "container-remap-root", NULL, "[fake pyxis] accepted and ignored" },
	{ "no-container-remap-root", NULL, "[fake pyxis] accepted and ignored" },
	{ "container-entrypoint", NULL, "[fake pyxis] accepted and ignored" },
	{ "no-container-entrypoint", NULL, "[fake pyxis] accepted and ignored" },
	{ "container-entrypoint-log", NULL, "[fake pyxis] accepted and ignored" },
	{ "container-writable", NULL, "[fake pyxis] accepted and ignored" },
	{ "container-readonly", NULL, "[fake pyxis] accepted and ignored" },
};

_Static_assert(sizeof(fake_options) / sizeof(fake_options[0]) == FAKE_OPTIONS,
	       "FAKE_OPTIONS counts fake_options");

/* Remote side, once per task before it starts: hand the record to the task. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	size_t i, j;
	char name[128];

	(void) ac;
	(void) av;
	for (i = 0; i < FAKE_OPTIONS; i++) {
		if (received[i] == NULL)
			continue;
		snprintf(name, sizeof(name), "FAKE_PYXIS_REMOTE_%s", fake_options[i].name);
		for (j = 0; name[j] != '\0'; j++) {
			if (name[j] == '-')
				name[j] = '_';
			else if (name[j] >= 'a' && name[j] <= 'z')
				name[j] = (char) (name[j] - 'a' + 'A');
		}
		spank_setenv(sp, name, received[i], 1);
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	size_t i;

	(void) ac;
	(void) av;
	for (i = 0; i < sizeof(fake_options) / sizeof(fake_options[0]); i++) {
		struct spank_option opt = {
			.name = (char *) fake_options[i].name,
			.arginfo = (char *) fake_options[i].arginfo,
			.usage = (char *) fake_options[i].usage,
			.has_arg = fake_options[i].arginfo != NULL,
			.val = (int) i,
			.cb = ignore_option,
		};
		spank_err_t rc = spank_option_register(sp, &opt);

		if (rc != ESPANK_SUCCESS) {
			slurm_error("fake_pyxis: cannot register --%s: %s",
				    fake_options[i].name, spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}
