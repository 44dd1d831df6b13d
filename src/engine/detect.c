/*
 * Observation and detection. Every operation a stream submits eagerly is
 * recorded into a ring (argument bytes into a ring arena) and fed to two
 * detectors:
 *  - segments: the run of operations between two boundaries (a sync, a
 *    barrier, an unrecorded operation on the stream) is hashed; a segment
 *    seen AUTOGRAPH_WARMUP times becomes sequences (one whose shape repeats
 *    but whose arguments change becomes one too, to be replayed by updates);
 *  - periods: for loops with no boundary at all, the distance to the last
 *    occurrence of the same operation shape proposes a period, confirmed op by
 *    op; a long confirmed run becomes a sequence of whole periods. Shapes, not
 *    full hashes: real programs change some argument bytes every iteration
 *    (a step counter, a struct's uninitialized padding), and a run whose
 *    arguments differ is replayed with an update of the nodes that differ.
 * A sequence never spans a boundary or an operation that cannot be a graph
 * node, and is cut every AUTOGRAPH_MAX_OPS operations from its start so that
 * the pieces repeat. Hashes only propose: replay compares full operations.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/internal.h"
#include "log.h"
#include "stats.h"

#define PERIOD_COMMIT 256     /* confirmed ops before a loop of a short period is graphed */
#define PERIOD_COMMIT_LONG 96 /* the same for a period of SHORT_SHAPE ops or more */
#define PERIOD_UNIT 128   /* short periods are grouped up to this many ops */
#define LEAD_MIN 16       /* segments at least this long start with short graphs */
#define LEAD_GROWN 512    /* shorter ones start with one piece of a quarter of their length, */
#define LEAD_FIRST 8      /* these with a piece this long, */
#define LEAD_GROWTH 4     /* then each next one this many times the last */
#define SHORT_SHAPE 16    /* shape periods this short wait for an exact period up to AG_PERIOD_MAX */

void ag_detect_reset(struct ag_stream *st)
{
	ag_account_segment(st, AG_UNL_OTHER);
	st->gap = st->observed;
	st->period = st->run = st->period_retry = 0;
	st->seg_start = st->observed;
	st->seg_hash = st->seg_shape = 0;
	HASH_CLEAR(hh, st->counts_exact.by_hash);
	HASH_CLEAR(hh, st->counts_shape.by_hash);
	st->counts_exact.used = st->counts_shape.used = 0;
}

/*
 * Splits a repeating window into pieces that can each be one graph. With a
 * lead, the first piece is cut after that many operations and, for a long
 * segment, each next one after LEAD_GROWTH times as many: after a sync the GPU
 * is idle, a short first graph gets it working while the rest is still being
 * matched on the CPU, and each piece runs long enough on the GPU for the CPU
 * to match the next (on the H100, a sync loop of 1000 tiny kernels: 94% of a
 * hand graph's speed with a quarter-length first piece, 99% with 8, 32, 128,
 * 512, 320). Shorter segments keep one quarter-length lead: the real programs'
 * steps (CuPy's 201 launches, a decode step) lost 2 points of replayed
 * operations to short pieces that start on launches recurring in the step.
 */
static void make_seqs(struct ag_stream *st, uint64_t start, uint64_t len, uint64_t lead,
		      const char *why, int on_shape)
{
	if (st->observed - start >= AG_HIST || start < st->gap)
		return;
	uint64_t max_ops = (uint64_t)ag_opt.num[AG_OPT_MAX_OPS];
	uint64_t min_ops = (uint64_t)ag_opt.num[AG_OPT_MIN_OPS];
	uint64_t piece = start;
	if (lead < min_ops)
		lead = 0;
	for (uint64_t i = start; i <= start + len; i++) {
		const struct ag_op *op = i < start + len ? &st->hist[i % AG_HIST] : NULL;
		int led = lead && i - piece == lead;
		int cut = !op || !op->nodeable || op->failed || !ag_arena_alive(st, op) ||
			  (i > piece && op->epoch != st->hist[piece % AG_HIST].epoch) ||
			  i - piece == max_ops || led;
		if (cut && lead)
			lead = led ? lead * LEAD_GROWTH : 0;
		if (op && !op->nodeable)
			ag_stats_add(op->call.kind == AG_OP_KERNEL && op->k && !op->k->graphable
					     ? AG_S_FB_EXCLUDED
					     : AG_S_FB_UNSUPPORTED,
				     1);
		if (!cut)
			continue;
		if (i - piece >= min_ops)
			ag_seq_learn(st, piece, (uint32_t)(i - piece), why, on_shape);
		piece = op && (!op->nodeable || op->failed || !ag_arena_alive(st, op)) ? i + 1 : i;
	}
}

/* Counts one more sight of a segment hash; a full table forgets its least recently seen. */
static struct ag_segment *segment(struct ag_segment_table *t, uint64_t key)
{
	unsigned hv = ag_key_hash(key);
	struct ag_segment *e;
	HASH_FIND_BYHASHVALUE(hh, t->by_hash, &key, sizeof key, hv, e);
	if (e) {
		HASH_DELETE(hh, t->by_hash, e);
	} else {
		if (t->used < AG_SEGS) {
			e = &t->pool[t->used++];
		} else {
			e = t->by_hash;
			HASH_DELETE(hh, t->by_hash, e);
		}
		e->hash = key;
		e->count = 0;
	}
	HASH_ADD_BYHASHVALUE(hh, t->by_hash, hash, sizeof key, hv, e);
	e->count++;
	return e;
}

static void end_segment(struct ag_stream *st)
{
	uint64_t len = st->observed - st->seg_start;
	if (st->seg_start < st->gap || len >= AG_HIST) {
		ag_account_segment(st, AG_UNL_OTHER);
		return;
	}
	if (len < (uint64_t)ag_opt.num[AG_OPT_MIN_OPS]) {
		ag_account_segment(st, AG_UNL_SHORT);
		return;
	}
	unsigned warmup = (unsigned)ag_opt.num[AG_OPT_WARMUP];
	struct ag_segment *exact = segment(&st->counts_exact, st->seg_hash);
	struct ag_segment *shape = segment(&st->counts_shape, st->seg_shape);
	ag_account_segment_ended(st, len, shape->count);
	if (shape->count > 1)
		ag_policy_repeating(st);
	st->prev_seg_start = st->seg_start, st->prev_seg_len = len;
	uint64_t lead = len < LEAD_MIN ? 0 : len < LEAD_GROWN ? len / 4 : LEAD_FIRST;
	if (exact->count == warmup)
		make_seqs(st, st->seg_start, len, lead, "repeating segment", 0);
	else if (exact->count == 1 && shape->count == warmup + 1 && ag_opt.num[AG_OPT_UPDATE])
		make_seqs(st, st->seg_start, len, lead, "segment with changing arguments", 1);
}

/*
 * The entry of hash h (pos == t for a hash not seen in the window). Entries
 * expire once their position falls out of the window, so the table holds at
 * most AG_PERIOD_MAX + 1 of them and none is ever displaced by another hash.
 */
static struct ag_lastpos *last_position(struct ag_stream *st, uint64_t t, uint64_t h)
{
	struct ag_lastpos *e;
	if (t > AG_PERIOD_MAX) {
		/* The operation observed one window ago keeps its entry: no second lookup. */
		uint64_t old = t - AG_PERIOD_MAX - 1;
		e = st->hist[old % AG_HIST].last;
		if (e && e->pos == old) {
			HASH_DELETE(hh, st->lastpos_by_hash, e);
			e->next_free = st->lastpos_free;
			st->lastpos_free = e;
		}
	}
	unsigned hv = ag_key_hash(h);
	HASH_FIND_BYHASHVALUE(hh, st->lastpos_by_hash, &h, sizeof h, hv, e);
	st->hist[t % AG_HIST].last = NULL;
	if (e)
		return st->hist[t % AG_HIST].last = e;
	if (st->lastpos_free) {
		e = st->lastpos_free;
		st->lastpos_free = e->next_free;
	} else {
		e = &st->lastpos[st->lastpos_used++];
	}
	e->hash = h;
	e->pos = t;
	HASH_ADD_BYHASHVALUE(hh, st->lastpos_by_hash, hash, sizeof h, hv, e);
	return st->hist[t % AG_HIST].last = e;
}

static int repeats(const struct ag_stream *st, uint64_t t, uint64_t D)
{
	uint64_t j = 0;
	while (j < D && st->hist[(t - j) % AG_HIST].hash == st->hist[(t - j - D) % AG_HIST].hash)
		j++;
	return j == D;
}

/*
 * The smallest multiple D of the shape period P over which the full hashes
 * repeat too, so that replays have the same arguments (one variant, no
 * updates): ping-pong buffers make D two iterations; a loop of 100 launches
 * of one kernel with 100 constants has P = 1 and D = 100. 0 if there is none;
 * *wait when a candidate needs more of the run to be confirmed.
 */
static uint64_t exact_period(const struct ag_stream *st, uint64_t t, uint64_t P, uint64_t lo, int *wait)
{
	*wait = 0;
	uint64_t h = st->hist[t % AG_HIST].hash;
	for (uint64_t D = P; D <= AG_PERIOD_MAX && t >= lo + D; D += P) {
		if (st->hist[(t - D) % AG_HIST].hash != h)
			continue;
		if (t + 1 < lo + 2 * D) {
			*wait = 1;
			return 0;
		}
		if (repeats(st, t, D))
			return D;
	}
	return 0;
}

static int by_shape(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Whether key occurs exactly once in the sorted array of n keys. */
static int occurs_once(const uint64_t *sorted, uint64_t n, uint64_t key)
{
	const uint64_t *at = bsearch(&key, sorted, n, sizeof *sorted, by_shape);
	return (at == sorted || at[-1] != key) && (at + 1 == sorted + n || at[1] != key);
}

/*
 * How far back from the period's last P operations a sequence should start so
 * that its first operation's shape occurs once per period: a hold starts on
 * the first operation's shape, and one that recurs inside the period (CuPy's
 * 50 identical elementwise launches per step) would start holds mid-step that
 * diverge at the step's one reduction. 0 if every shape recurs.
 */
static uint64_t unique_start(const struct ag_stream *st, uint64_t t, uint64_t P, uint64_t lo)
{
	static __thread uint64_t sorted[AG_PERIOD_MAX];
	uint64_t first = t + 1 - P;
	for (uint64_t i = 0; i < P; i++)
		sorted[i] = st->hist[(first + i) % AG_HIST].shape;
	qsort(sorted, P, sizeof *sorted, by_shape);
	/* Where the repetition began, if work that does not repeat came before it: a model's
	 * layers follow its embedding, and pieces that start at the first layer end with the
	 * last, where a hold started on any other layer would run past them. */
	uint64_t origin = t + 1 - P - (st->run - 1);
	if (origin < lo)
		origin = lo; /* a run longer than the history goes back as far as it remembers */
	while (origin > lo && st->hist[(origin - 1) % AG_HIST].shape == st->hist[(origin - 1 + P) % AG_HIST].shape)
		origin--;
	uint64_t phase = (origin + P - first % P) % P;
	if (origin > lo)
		return phase ? P - phase : 0;
	for (uint64_t k = 0; k <= P; k++) {
		uint64_t i = k ? k - 1 : phase;
		if (occurs_once(sorted, P, st->hist[(first + i) % AG_HIST].shape))
			return i ? P - i : 0;
	}
	return 0;
}

/*
 * How many operations after s the first one lies whose full hash occurs once in
 * [s, s + D), D if none. A hold of an exact period starts on its first
 * operation's arguments: where no shape is unique (an MLP's layers launch the
 * same two kernels), a sequence that starts on an operation every layer makes
 * alike (the activation, its uninitialized bytes changing between steps)
 * rarely starts, and one that starts on a layer's own weights always does.
 */
static uint64_t unique_hash_after(const struct ag_stream *st, uint64_t s, uint64_t D)
{
	static __thread uint64_t sorted[AG_PERIOD_MAX];
	for (uint64_t i = 0; i < D; i++)
		sorted[i] = st->hist[(s + i) % AG_HIST].hash;
	qsort(sorted, D, sizeof *sorted, by_shape);
	for (uint64_t k = 0; k < D; k++)
		if (occurs_once(sorted, D, st->hist[(s + k) % AG_HIST].hash))
			return k;
	return D;
}

/*
 * The evidence for a period runs across boundaries (a loop that synchronizes
 * after its warmup repeats the same work on both sides); the window it
 * becomes a sequence from lies after the last one (`from`), as a graph cannot
 * hold a synchronization.
 */
static void find_period(struct ag_stream *st, uint64_t t, uint64_t h)
{
	uint64_t lo = t + 1 > AG_HIST && st->gap < t + 1 - AG_HIST ? t + 1 - AG_HIST : st->gap;
	uint64_t from = st->seg_start > lo ? st->seg_start : lo;
	if (st->period) {
		uint64_t p = t - st->period;
		if (p < lo || st->hist[p % AG_HIST].shape != h)
			st->period = st->run = st->period_retry = 0;
		else if (++st->run >= PERIOD_COMMIT_LONG)
			ag_policy_repeating(st); /* a loop, though not yet learned */
	}
	struct ag_lastpos *last = last_position(st, t, h);
	if (!st->period && last->pos != t && last->pos >= lo && t - last->pos <= AG_PERIOD_MAX) {
		st->period = t - last->pos;
		st->run = 1;
	}
	last->pos = t;
	uint64_t P = st->period;
	uint64_t commit = (uint64_t)(ag_opt.num[AG_OPT_WARMUP] - 1) * P;
	if (commit < PERIOD_COMMIT_LONG)
		commit = PERIOD_COMMIT_LONG;
	if (!P || st->run < commit || st->run < P || t + 1 < st->period_retry)
		return;
	int wait;
	uint64_t exact = exact_period(st, t, P, from, &wait);
	/* A period this short may repeat inside a longer step (CuPy launches one elementwise
	 * kernel 50 times a step): it needs the longer confirmation. */
	if ((exact ? exact : P) < SHORT_SHAPE && st->run < PERIOD_COMMIT)
		return;
	/* An exact period in sight is confirmed before settling for the shape; so is one not yet
	 * seen behind a very short shape period (one kernel launched with N constants). Checked
	 * first: it is the cheaper test, and the one that waits longest. Exact periods are looked
	 * for after the boundary only, so only that part of the run rules them out: a loop of
	 * 1000 launches of one kernel that syncs every iteration would otherwise settle for the
	 * shape, and replay every piece with updates. */
	uint64_t seen = t + 1 - from < st->run ? t + 1 - from : st->run; /* of the run, after the boundary */
	if ((wait && seen < 2 * AG_PERIOD_MAX) || (!exact && P < SHORT_SHAPE && seen < AG_PERIOD_MAX))
		return;
	uint64_t back = unique_start(st, t, P, from);
	if (st->run < back + P)
		return; /* the run must reach back to the period's unique operation */
	int on_shape = !exact; /* its runs' first arguments differ: holds start on the shape */
	P = exact ? exact : P;
	uint64_t max_ops = (uint64_t)ag_opt.num[AG_OPT_MAX_OPS];
	uint64_t unit = P;
	if (P < PERIOD_UNIT)
		unit = P * ((PERIOD_UNIT < max_ops ? PERIOD_UNIT : max_ops) / P);
	if (unit < P)
		unit = P;
	if (exact > 1) {
		uint64_t k = unique_hash_after(st, t + 1 - unit - back, exact);
		if (k < exact)
			back = k <= back ? back - k : back + exact - k;
	}
	if (st->run < back + P)
		return;
	if (t + 1 < from + unit + back) {
		st->period_retry = from + unit + back; /* when the window fits, if no boundary comes */
		return;
	}
	uint64_t start = t + 1 - unit - back;
	if (exact) {
		/* The exact period was confirmed over the run's last two periods only, and a
		 * window of several periods reaches further back: an earlier iteration's first
		 * operation may have had other arguments (a first step's buffers). A sequence
		 * starting on those would never start; it waits until its window starts after
		 * the last that differs from the latest at its phase. Later operations may
		 * differ (the replay updates their nodes). */
		uint64_t latest = st->hist[(start + unit - P) % AG_HIST].hash;
		for (uint64_t i = start + unit - P; i > start; i -= P) {
			if (st->hist[(i - P) % AG_HIST].hash != latest) {
				st->period_retry = i + unit + back;
				return;
			}
		}
	}
	make_seqs(st, start, unit, 0, on_shape ? "loop with changing arguments" : "repeating loop", on_shape);
	st->period = st->run = st->period_retry = 0;
}

void ag_detect_epoch(struct ag_stream *st, uint64_t epoch)
{
	if (epoch == st->last_epoch)
		return;
	if (st->observed > st->seg_start)
		end_segment(st);
	st->seg_start = st->observed;
	st->seg_hash = st->seg_shape = 0;
	st->last_epoch = epoch;
}

/*
 * A hold starts: the operations observed since the segment began end there,
 * as at a boundary. A step that a learned sequence covers only in part (the
 * layers of a model, but not the work before them) repeats its uncovered
 * head this way, and the head is learned like any segment.
 */
void ag_detect_hold_starts(struct ag_stream *st)
{
	if (st->observed > st->seg_start)
		end_segment(st);
}

void ag_detect_commit(struct ag_stream *st)
{
	uint64_t t = st->observed;
	const struct ag_op *op = &st->hist[t % AG_HIST];
	ag_detect_epoch(st, op->epoch);
	st->seg_hash = ag_mix(st->seg_hash, op->hash);
	st->seg_shape = ag_mix(st->seg_shape, op->shape);
	st->observed = t + 1;
	find_period(st, t, op->shape);
	ag_policy_observed(st);
}
