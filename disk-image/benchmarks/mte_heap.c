/*
 * MTE on allocation-heavy code: a tagging allocator under two workloads.
 *
 *   mte_heap untagged|none|sync|async|asymm churn|kv SLOTS WARMUP N
 *
 * The allocator hands out blocks of 16 to 256 bytes in sixteen size classes,
 * each class a last-in first-out stack of free blocks (kept in plain memory)
 * over one arena, and tags blocks the way a hardened allocator with MTE
 * does (Android's Scudo, in outline): a block gets a random tag when it is
 * allocated (IRG, then ST2G over its granules two at a time, STG for an odd
 * last one) and another one when it is freed, chosen to differ from its
 * user's, so that a stale pointer faults. With "untagged" the arena is plain
 * memory and nothing is tagged: the same code without MTE. "none" tags but
 * does not check.
 *
 *   churn  SLOTS live blocks; an operation frees the block in a random slot
 *          and allocates one of a random size (16 to 256 bytes) in its place,
 *          writing its first and last words
 *   kv     a key-value store: SLOTS / 2 keys in an open-addressed table of
 *          SLOTS buckets (a power of two), each entry one heap block, a
 *          16-byte header (key, length) and a value of 16 to 240 bytes; an
 *          operation is a get (95%: find the key, sum its value's words) or a
 *          put (5%: a new entry with a value of a new length replaces the
 *          old one, which is freed), YCSB workload B's read-mostly mix
 *
 * Set-up fills every slot (or key); WARMUP unmeasured operations then
 * precede the N measured ones; ops counts the measured operations.
 */
#include "mte.h"

#define GRANULE 16
#define CLASSES 16
#define LARGEST (CLASSES * GRANULE)
#define PAGE 4096
#define GET_PERCENT 95

struct heap {
	char *arena, *arena_end, *bump;
	/* Free blocks of each class, untagged addresses. */
	char **free_blocks[CLASSES];
	unsigned long free_count[CLASSES], free_capacity;
	int tagged;
};

struct entry {
	uint64_t key;
	uint64_t words;
	uint64_t value[];
};

static inline unsigned int size_class(size_t size)
{
	return (unsigned int)((size + GRANULE - 1) / GRANULE) - 1;
}

static inline char *untagged_address(char *p)
{
	return (char *)((uintptr_t)p & ~(0xffUL << 56));
}

/* A random tag for the block other than the ones in exclude (a GMI mask),
 * stored in every granule of it; returns the pointer carrying the tag. */
static inline char *retag(char *block, size_t size, uint64_t exclude)
{
	char *tagged, *granule, *end;

	asm volatile(".arch armv8.5-a+memtag\n\tirg	%0, %1, %2"
		     : "=r"(tagged)
		     : "r"(block), "r"(exclude));
	end = tagged + size;
	for (granule = tagged; granule + 2 * GRANULE <= end; granule += 2 * GRANULE)
		asm volatile(".arch armv8.5-a+memtag\n\tst2g	%0, [%0]" : : "r"(granule) : "memory");
	if (granule < end)
		asm volatile(".arch armv8.5-a+memtag\n\tstg	%0, [%0]" : : "r"(granule) : "memory");
	return tagged;
}

static inline uint64_t tag_mask(const void *p)
{
	uint64_t mask;

	asm(".arch armv8.5-a+memtag\n\tgmi	%0, %1, xzr" : "=r"(mask) : "r"(p));
	return mask;
}

static void *heap_alloc(struct heap *heap, size_t size)
{
	unsigned int class = size_class(size);
	size_t block_size = (class + 1) * GRANULE;
	char *block;

	if (heap->free_count[class]) {
		block = heap->free_blocks[class][--heap->free_count[class]];
	} else {
		if (heap->bump + block_size > heap->arena_end) {
			fprintf(stderr, "mte_heap: arena exhausted\n");
			exit(1);
		}
		block = heap->bump;
		heap->bump += block_size;
	}
	return heap->tagged ? retag(block, block_size, 0) : block;
}

/* Sized free, as C++'s sized delete: the caller knows the block's size. */
static void heap_free(struct heap *heap, void *p, size_t size)
{
	unsigned int class = size_class(size);
	char *block = untagged_address(p);

	if (heap->tagged)
		retag(block, (class + 1) * GRANULE, tag_mask(p));
	if (heap->free_count[class] == heap->free_capacity) {
		fprintf(stderr, "mte_heap: free list of class %u full\n", class);
		exit(1);
	}
	heap->free_blocks[class][heap->free_count[class]++] = block;
}

static void heap_init(struct heap *heap, unsigned long live_blocks, enum mode mode)
{
	/* Room for every live block in any class with its class's free blocks
	 * beside it: a block is carved only when its class's stack is empty. */
	size_t arena_size = (live_blocks * LARGEST * 2 + PAGE - 1) / PAGE * PAGE;
	size_t stack_size = (live_blocks * sizeof(char *) + PAGE - 1) / PAGE * PAGE;

	heap->arena = bench_map(arena_size, PAGE, MADV_NOHUGEPAGE);
	heap->arena_end = heap->arena + arena_size;
	heap->bump = heap->arena;
	heap->tagged = mode != UNTAGGED;
	if (heap->tagged && mprotect(heap->arena, arena_size, PROT_READ | PROT_WRITE | PROT_MTE)) {
		perror("mprotect(PROT_MTE)");
		exit(1);
	}
	heap->free_capacity = live_blocks;
	for (unsigned int c = 0; c < CLASSES; c++) {
		heap->free_blocks[c] = bench_map(stack_size, PAGE, MADV_NOHUGEPAGE);
		heap->free_count[c] = 0;
	}
}

struct churn {
	uint64_t **slot;
	size_t *slot_size;
	unsigned long slots;
};

static inline size_t random_size(uint64_t *state)
{
	return GRANULE * (1 + bench_below(state, CLASSES));
}

static void churn_fill(struct heap *heap, struct churn *churn, uint64_t *state)
{
	churn->slot = bench_map((churn->slots * sizeof(*churn->slot) + PAGE - 1) / PAGE * PAGE,
				PAGE, MADV_NOHUGEPAGE);
	churn->slot_size = bench_map((churn->slots * sizeof(size_t) + PAGE - 1) / PAGE * PAGE,
				     PAGE, MADV_NOHUGEPAGE);
	for (unsigned long i = 0; i < churn->slots; i++) {
		churn->slot_size[i] = random_size(state);
		churn->slot[i] = heap_alloc(heap, churn->slot_size[i]);
		churn->slot[i][0] = i;
	}
}

static void churn_run(struct heap *heap, struct churn *churn, uint64_t *state,
		      unsigned long n)
{
	for (unsigned long op = 0; op < n; op++) {
		unsigned long i = bench_below(state, churn->slots);
		size_t size = random_size(state);
		uint64_t *block;

		heap_free(heap, churn->slot[i], churn->slot_size[i]);
		block = heap_alloc(heap, size);
		block[0] = op;
		block[size / sizeof(uint64_t) - 1] = op;
		churn->slot[i] = block;
		churn->slot_size[i] = size;
	}
}

struct store {
	struct entry **bucket;
	unsigned long buckets, keys;
	uint64_t sink;
};

static inline unsigned long bucket_of(const struct store *store, uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ULL) & (store->buckets - 1);
}

/* The bucket holding key (every key is in the table). */
static inline unsigned long find(const struct store *store, uint64_t key)
{
	unsigned long b = bucket_of(store, key);

	while (store->bucket[b]->key != key)
		b = (b + 1) & (store->buckets - 1);
	return b;
}

static struct entry *new_entry(struct heap *heap, uint64_t key, uint64_t *state)
{
	uint64_t words = 2 + bench_below(state, CLASSES - 1) * 2;
	struct entry *e = heap_alloc(heap, sizeof(*e) + words * sizeof(uint64_t));

	e->key = key;
	e->words = words;
	for (uint64_t w = 0; w < words; w++)
		e->value[w] = key + w;
	return e;
}

static void store_fill(struct heap *heap, struct store *store, uint64_t *state)
{
	store->bucket = bench_map((store->buckets * sizeof(*store->bucket) + PAGE - 1) / PAGE *
				  PAGE, PAGE, MADV_NOHUGEPAGE);
	for (uint64_t key = 0; key < store->keys; key++) {
		unsigned long b = bucket_of(store, key);

		while (store->bucket[b])
			b = (b + 1) & (store->buckets - 1);
		store->bucket[b] = new_entry(heap, key, state);
	}
}

static void store_run(struct heap *heap, struct store *store, uint64_t *state,
		      unsigned long n)
{
	for (unsigned long op = 0; op < n; op++) {
		uint64_t key = bench_below(state, store->keys);
		unsigned long b = find(store, key);
		struct entry *e = store->bucket[b];

		if (bench_below(state, 100) < GET_PERCENT) {
			uint64_t sum = 0;

			for (uint64_t w = 0; w < e->words; w++)
				sum += e->value[w];
			store->sink += sum;
		} else {
			store->bucket[b] = new_entry(heap, key, state);
			heap_free(heap, e, sizeof(*e) + e->words * sizeof(uint64_t));
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long slots, warmup, n;
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	struct heap heap;
	enum mode mode;
	int kv;

	if (argc != 6) {
		fprintf(stderr, "usage: %s ", argv[0]);
		print_modes("|");
		fprintf(stderr, " churn|kv SLOTS WARMUP N\n");
		return 2;
	}
	mode = mte_mode(argv[1]);
	if (strcmp(argv[2], "churn") && strcmp(argv[2], "kv")) {
		fprintf(stderr, "unknown workload '%s' (valid: churn, kv)\n", argv[2]);
		return 2;
	}
	kv = !strcmp(argv[2], "kv");
	slots = bench_count(argv[3], "SLOTS");
	warmup = bench_count(argv[4], "WARMUP");
	n = bench_count(argv[5], "N");
	if (slots < 2 || (slots & (slots - 1))) {
		fprintf(stderr, "SLOTS must be a power of two, at least 2\n");
		return 2;
	}
	if (mode != UNTAGGED)
		set_check_mode(mode);
	heap_init(&heap, slots, mode);

	if (kv) {
		struct store store = { .buckets = slots, .keys = slots / 2 };

		store_fill(&heap, &store, &state);
		bench_detail_begin();
		store_run(&heap, &store, &state, warmup);
		bench_region_begin();
		store_run(&heap, &store, &state, n);
		bench_region_end();
	} else {
		struct churn churn = { .slots = slots };

		churn_fill(&heap, &churn, &state);
		bench_detail_begin();
		churn_run(&heap, &churn, &state, warmup);
		bench_region_begin();
		churn_run(&heap, &churn, &state, n);
		bench_region_end();
	}
	printf("mte_heap mode=%s workload=%s slots=%lu ops=%lu\n", mode_names[mode], argv[2],
	       slots, n);
	return 0;
}
