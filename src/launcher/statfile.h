/*
 * The integer counters of one JSON statistics file written by the library,
 * by name ("replays", "copies.htod"); see statfile.c for what is read.
 */
#ifndef AG_STATFILE_H
#define AG_STATFILE_H

enum { AG_STATFILE_MAX = 128 };

struct ag_stat_value {
	char name[96];
	long long value;
};

struct ag_statfile {
	int count;
	struct ag_stat_value values[AG_STATFILE_MAX];
};

/* 0 on success; -1 if the file cannot be read or is not JSON this reader follows. */
int ag_statfile_read(const char *path, struct ag_statfile *out);

/* The counter's value; 0 for a name the file does not have. */
long long ag_statfile_get(const struct ag_statfile *st, const char *name);

#endif
