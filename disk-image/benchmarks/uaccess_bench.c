/*
 * Batched user access against per-access toggling (claim C4): system calls
 * whose kernel side is mostly user-memory accesses.
 *
 *   uaccess_bench pathwalk|longpath|getdents|getppid|check WARMUP COUNT
 *
 * "pathwalk" is what make does to a built tree: newfstatat(AT_FDCWD, path,
 * AT_SYMLINK_NOFOLLOW), glibc's lstat(), on files with long relative paths.
 * It first builds, under $UACCESS_BENCH_DIR (default /tmp, a tmpfs in the
 * guest), the directory uaccess_bench_tree with 4 levels of 4 directories
 * named with 30-60 characters, and 4 files in every leaf directory: 1024
 * files, relative paths of 164-252 bytes (mean 206: 21-32 words for
 * strncpy_from_user()). Each operation is one call on the next file of a
 * fixed random order. The kernel copies the path in (getname():
 * strncpy_from_user()), walks 6 cached components and copies the 128-byte
 * struct stat out (one copy_to_user()).
 *
 * "longpath" is faccessat(AT_FDCWD, path, F_OK) with an absolute path of
 * 4000 bytes whose first component does not exist: the kernel copies all
 * 4000 bytes in (500 words), then the walk ends with ENOENT at the first
 * component (a cached negative dentry on the guest's ext4 root), so the
 * call is mostly strncpy_from_user().
 *
 * "getdents" reads a directory of 1024 files (names of 23-39 bytes) with
 * getdents64() into a 32 KiB buffer, from offset 0 to the end (lseek()
 * back to 0, then about three calls). filldir64() writes each entry with
 * five put_user()s and one copy of the name: one batch per entry. COUNT is
 * the number of passes over the directory; ops counts the entries read.
 *
 * "getppid" is the control: a system call with no user access at all.
 *
 * "check" is a user-copy stress, for showing that a variant changes what
 * user access costs and not what it does: copies in and out through a pipe
 * at every alignment and at lengths across word and page boundaries, path
 * copies of every length around the word size, get_user/put_user-style
 * calls, and faults (EFAULT from a PROT_NONE page, a path that runs into
 * one, ENAMETOOLONG). WARMUP is ignored; each of COUNT rounds repeats every
 * check; ops counts the checks passed. Any wrong result exits 1. It first
 * checks which PAN the kernel uses, from its boot log: emulated (software
 * TTBR0 PAN) exactly when the command line has arm64.nopan, the CPU's
 * FEAT_PAN otherwise.
 *
 * WARMUP operations (passes for getdents) run first, outside the measured
 * region, so caches, predictors and the dcache hold everything the region
 * touches. Suggested counts: pathwalk 2048 30000, longpath 1000 10000,
 * getdents 2 200, getppid 10000 100000. Counted under qemu-system -icount
 * on the C4 kernels (user and kernel instructions per operation, batched
 * 6.12 to software PAN toggled per access): pathwalk 4.2-5.0 k, longpath
 * 8.2-22.8 k, getdents 310-490 per entry, getppid 270-290; so each region
 * stays within 30-230 M instructions.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define FANOUT 4 /* directories per directory, and files per leaf */
#define LEVELS 4
#define FILES 1024 /* FANOUT^LEVELS leaf directories times FANOUT files */
#define PATH_BYTES 512
#define LONG_PATH_BYTES 4000 /* below getname()'s 4064-byte embedded name */
#define DENT_FILES 1024
#define DENT_BUFFER 32768 /* glibc's readdir() buffer size */

/* arm64 system call numbers */
#define NR_FACCESSAT 48
#define NR_LSEEK 62
#define NR_GETDENTS64 61
#define NR_NEWFSTATAT 79
#define NR_GETPPID 173

#define AT_FDCWD_ (-100)
#define AT_SYMLINK_NOFOLLOW_ 0x100

static inline long syscall4(long nr, long a0, long a1, long a2, long a3)
{
	register long x8 asm("x8") = nr;
	register long x0 asm("x0") = a0;
	register long x1 asm("x1") = a1;
	register long x2 asm("x2") = a2;
	register long x3 asm("x3") = a3;

	asm volatile("svc #0"
		     : "+r"(x0)
		     : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
		     : "memory");
	return x0;
}

static inline long syscall0(long nr)
{
	register long x8 asm("x8") = nr;
	register long x0 asm("x0");

	asm volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
}

static const char *base_dir(void)
{
	const char *dir = getenv("UACCESS_BENCH_DIR");

	return dir && *dir ? dir : "/tmp";
}

static void enter(const char *dir)
{
	if (chdir(dir)) {
		fprintf(stderr, "chdir %s: %s\n", dir, strerror(errno));
		exit(1);
	}
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "mkdir %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void make_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	if (fd < 0) {
		fprintf(stderr, "create %s: %s\n", path, strerror(errno));
		exit(1);
	}
	close(fd);
}

/* length random lower-case letters and digits, then a NUL */
static void random_name(char *out, unsigned int length, uint64_t *rng)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (unsigned int i = 0; i < length; i++)
		out[i] = chars[bench_below(rng, sizeof(chars) - 1)];
	out[length] = '\0';
}

/*
 * The pathwalk tree under ./uaccess_bench_tree: directory names are a
 * digit (the position among its siblings, so siblings differ) and 29-59
 * random characters; files are "f<index>_<8 random>.o". Fills paths[] with
 * every file's path relative to the current directory.
 */
static void build_tree(char (*paths)[PATH_BYTES])
{
	static const char root[] = "uaccess_bench_tree";
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	char path[PATH_BYTES];
	size_t end[LEVELS + 1]; /* where each level's name ends in path */
	unsigned int index[LEVELS + 1] = { 0 };
	unsigned int files = 0;
	int level = 1;

	strcpy(path, root);
	end[0] = strlen(root);
	make_dir(path);
	/* depth-first over the LEVELS directory levels */
	while (level > 0) {
		char *name = path + end[level - 1] + 1;

		if (index[level] == FANOUT) {
			index[level] = 0;
			level--;
			if (level > 0)
				index[level]++;
			continue;
		}
		path[end[level - 1]] = '/';
		name[0] = (char)('0' + index[level]);
		random_name(name + 1, 29 + bench_below(&rng, 31), &rng);
		end[level] = end[level - 1] + 1 + strlen(name);
		make_dir(path);
		if (level < LEVELS) {
			level++;
			continue;
		}
		for (unsigned int f = 0; f < FANOUT; f++) {
			char file[16];

			random_name(file, 8, &rng);
			snprintf(paths[files], PATH_BYTES, "%s/f%04u_%s.o", path, files, file);
			make_file(paths[files]);
			files++;
		}
		index[level]++;
	}
	if (files != FILES) {
		fprintf(stderr, "built %u files, expected %u\n", files, FILES);
		exit(1);
	}
}

static void run_pathwalk(char (*paths)[PATH_BYTES], const unsigned short *order,
			 unsigned long n, unsigned long *next)
{
	struct stat st;
	unsigned long k = *next;

	for (unsigned long i = 0; i < n; i++) {
		long ret = syscall4(NR_NEWFSTATAT, AT_FDCWD_, (long)paths[order[k]],
				    (long)&st, AT_SYMLINK_NOFOLLOW_);

		if (ret) {
			fprintf(stderr, "newfstatat %s: %s\n", paths[order[k]],
				strerror((int)-ret));
			exit(1);
		}
		k = (k + 1) % FILES;
	}
	*next = k;
}

static void run_longpath(const char *path, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		long ret = syscall4(NR_FACCESSAT, AT_FDCWD_, (long)path, F_OK, 0);

		if (ret != -ENOENT) {
			fprintf(stderr, "faccessat returned %ld, expected -ENOENT\n", ret);
			exit(1);
		}
	}
}

/* The getdents directory ./uaccess_bench_dents: DENT_FILES empty files. */
static void build_dents(void)
{
	uint64_t rng = 0x2545f4914f6cdd1dULL;
	char path[128], name[64];

	make_dir("uaccess_bench_dents");
	for (unsigned int f = 0; f < DENT_FILES; f++) {
		random_name(name, 18 + bench_below(&rng, 17), &rng);
		snprintf(path, sizeof(path), "uaccess_bench_dents/%04u_%s", f, name);
		make_file(path);
	}
}

/* One pass over the directory; returns the bytes getdents64() gave. */
static unsigned long dents_pass(int fd, char *buffer)
{
	unsigned long bytes = 0;
	long got;

	if (syscall4(NR_LSEEK, fd, 0, SEEK_SET, 0)) {
		perror("lseek");
		exit(1);
	}
	while ((got = syscall4(NR_GETDENTS64, fd, (long)buffer, DENT_BUFFER, 0)) > 0)
		bytes += got;
	if (got < 0) {
		fprintf(stderr, "getdents64: %s\n", strerror((int)-got));
		exit(1);
	}
	return bytes;
}

/* Entries in one pass, counted outside the measured region. */
static unsigned long dents_entries(int fd, char *buffer)
{
	unsigned long entries = 0;
	long got;

	syscall4(NR_LSEEK, fd, 0, SEEK_SET, 0);
	while ((got = syscall4(NR_GETDENTS64, fd, (long)buffer, DENT_BUFFER, 0)) > 0)
		for (long at = 0; at < got;
		     at += *(unsigned short *)(buffer + at + 16)) /* d_reclen */
			entries++;
	return entries;
}

static void run_getppid(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		syscall0(NR_GETPPID);
}

#define NR_WRITE 64
#define NR_READ 63
#define NR_PIPE2 59
#define NR_GETRESUID 148
#define NR_CLOSE 57

static unsigned long checks_passed;

static void expect(int ok, const char *what, long got)
{
	if (!ok) {
		fprintf(stderr, "check failed: %s (got %ld)\n", what, got);
		exit(1);
	}
	checks_passed++;
}

/* Pipe round trips: copy_from_user() in write(), copy_to_user() in read(). */
static void check_copies(char *src, char *dst, int fds[2])
{
	static const unsigned int lengths[] = { 1, 7, 8, 9, 15, 16, 17, 63, 64, 65,
						255, 256, 4095, 4096, 4097, 8191 };

	for (unsigned int a = 0; a < 16; a++) {
		for (unsigned int l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
			unsigned long n = lengths[l];
			char *from = src + 4096 - (n % 4096) / 2 + a; /* straddles a page */
			char *to = dst + 4096 - (n % 4096) / 2 + 15 - a;
			long got;

			for (unsigned long i = 0; i < n; i++)
				from[i] = (char)(i * 31 + a + l);
			memset(to, 0, n);
			got = syscall4(NR_WRITE, fds[1], (long)from, (long)n, 0);
			expect(got == (long)n, "write() of a user buffer", got);
			got = syscall4(NR_READ, fds[0], (long)to, (long)n, 0);
			expect(got == (long)n, "read() into a user buffer", got);
			expect(!memcmp(from, to, n), "bytes read back equal bytes written", 0);
		}
	}
}

/* Paths of every length from 1 to 300 bytes, at 8 alignments, all naming
 * the same file: "/tmp/" ("./" repeated) "uaccess_bench_file". */
static void check_paths(char *buffer)
{
	static const char head[] = "/tmp/", tail[] = "uaccess_bench_file";
	const size_t fixed = strlen(head) + strlen(tail);

	for (unsigned int a = 0; a < 8; a++) {
		for (size_t len = fixed; len <= 300; len++) {
			char *path = buffer + a;
			size_t at = strlen(head), pad = len - fixed;
			long got;

			memcpy(path, head, at);
			/* odd padding: one extra '/' (repeated slashes are one) */
			for (size_t i = 0; i < pad; i++)
				path[at + i] = (i % 2 == 0 && i + 1 < pad) ? '.' : '/';
			memcpy(path + at + pad, tail, sizeof(tail));
			got = syscall4(NR_FACCESSAT, AT_FDCWD_, (long)path, F_OK, 0);
			expect(got == 0, "faccessat() of a padded path", got);
		}
	}
}

static void check_faults(char *readable, char *inaccessible, int fds[2])
{
	char *tail = inaccessible - 100;
	unsigned int ids[3] = { ~0u, ~0u, ~0u };
	struct stat st;
	long got;

	got = syscall4(NR_WRITE, fds[1], (long)inaccessible, 64, 0);
	expect(got == -EFAULT, "write() from a PROT_NONE page fails with EFAULT", got);
	got = syscall4(NR_WRITE, fds[1], (long)"0123456789abcdef", 16, 0);
	expect(got == 16, "write() after a fault", got);
	got = syscall4(NR_READ, fds[0], (long)readable, 16, 0);
	expect(got == -EFAULT, "read() into a read-only page fails with EFAULT", got);
	got = syscall4(NR_READ, fds[0], (long)inaccessible - 8, 16, 0);
	expect(got == -EFAULT || got == 8, "read() running into a PROT_NONE page", got);
	{
		/* pipe_read() consumes nothing of a buffer it fails to copy */
		long left = got == 8 ? 8 : 16;
		char rest[16];

		got = syscall4(NR_READ, fds[0], (long)rest, left, 0);
		expect(got == left && !memcmp(rest, "0123456789abcdef" + 16 - left, left),
		       "read() of what a faulting read() left in the pipe", got);
	}
	got = syscall4(NR_NEWFSTATAT, AT_FDCWD_, (long)inaccessible, (long)&st,
		       AT_SYMLINK_NOFOLLOW_);
	expect(got == -EFAULT, "newfstatat() of a path in a PROT_NONE page", got);
	memset(tail, 'a', 100); /* no NUL before the PROT_NONE page */
	got = syscall4(NR_FACCESSAT, AT_FDCWD_, (long)tail, F_OK, 0);
	expect(got == -EFAULT, "faccessat() of a path running into a PROT_NONE page", got);
	got = syscall4(NR_NEWFSTATAT, AT_FDCWD_, (long)"/tmp/uaccess_bench_file",
		       (long)readable, 0);
	expect(got == -EFAULT, "newfstatat() into a read-only page fails with EFAULT", got);
	got = syscall4(NR_GETRESUID, (long)&ids[0], (long)&ids[1], (long)&ids[2], 0);
	expect(got == 0 && ids[0] == 0 && ids[1] == 0 && ids[2] == 0,
	       "getresuid() writes three ids", got);
	got = syscall4(NR_GETRESUID, (long)&ids[0], (long)readable, (long)&ids[2], 0);
	expect(got == -EFAULT, "getresuid() into a read-only page fails with EFAULT", got);
}

static void check_long_names(char *buffer)
{
	long got;

	memset(buffer, 'a', 4200);
	buffer[0] = '/';
	buffer[4200] = '\0';
	got = syscall4(NR_FACCESSAT, AT_FDCWD_, (long)buffer, F_OK, 0);
	expect(got == -ENAMETOOLONG, "faccessat() of a 4200-byte path", got);
}

/* Which PAN the boot log says the kernel uses must follow arm64.nopan. */
static void check_pan_mode(void)
{
	static const char emulated[] = "emulated: Privileged Access Never (PAN) using TTBR0_EL1";
	static const char detected[] = "detected: Privileged Access Never";
	char cmdline[4096] = "";
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *log = size > 0 ? malloc((size_t)size + 1) : NULL;
	FILE *f = fopen("/proc/cmdline", "r");
	int length, want_software;

	if (!f || !fgets(cmdline, sizeof(cmdline), f) || !log) {
		fprintf(stderr, "check failed: cannot read /proc/cmdline or the log size\n");
		exit(1);
	}
	fclose(f);
	length = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, size);
	if (length < 0) {
		perror("klogctl");
		exit(1);
	}
	log[length] = '\0';
	want_software = strstr(cmdline, "arm64.nopan") != NULL;
	expect(strstr(log, want_software ? emulated : detected) != NULL,
	       want_software ? "arm64.nopan: the kernel emulates PAN (software TTBR0 PAN)"
			     : "no arm64.nopan: the kernel uses the CPU's PAN", 0);
	expect(strstr(log, want_software ? detected : emulated) == NULL,
	       "the kernel reports one kind of PAN only", 0);
	printf("uaccess_bench pan=%s\n", want_software ? "software" : "hardware");
	free(log);
}

static unsigned long run_check(unsigned long rounds)
{
	/* source, destination: 3 pages each; a writable page, then a PROT_NONE
	 * one (strings and copies that run off the first into the second), and
	 * a read-only page */
	char *area = bench_map(9 * 4096, 4096, MADV_NOHUGEPAGE);
	char *src = area, *dst = area + 3 * 4096;
	char *inaccessible = area + 7 * 4096, *readable = area + 8 * 4096;
	char *paths = bench_map(2 * 4096, 4096, MADV_NOHUGEPAGE);
	int fds[2];
	long got;

	check_pan_mode();
	make_file("/tmp/uaccess_bench_file");
	if (mprotect(readable, 4096, PROT_READ) || mprotect(inaccessible, 4096, PROT_NONE)) {
		perror("mprotect");
		exit(1);
	}
	got = syscall4(NR_PIPE2, (long)readable, 0, 0, 0);
	expect(got == -EFAULT, "pipe2() into a read-only page fails with EFAULT", got);
	got = syscall4(NR_PIPE2, (long)fds, 0, 0, 0);
	expect(got == 0, "pipe2()", got);
	got = syscall4(NR_FACCESSAT, AT_FDCWD_, (long)"/tmp/uaccess_bench_file", F_OK, 0);
	expect(got == 0, "faccessat() of the check file", got);
	for (unsigned long r = 0; r < rounds; r++) {
		check_copies(src, dst, fds);
		check_paths(paths);
		check_faults(readable, inaccessible, fds);
		check_long_names(paths);
	}
	syscall4(NR_CLOSE, fds[0], 0, 0, 0);
	syscall4(NR_CLOSE, fds[1], 0, 0, 0);
	return checks_passed;
}

int main(int argc, char **argv)
{
	unsigned long warmup, count, ops;
	const char *mode;

	if (argc != 4) {
		fprintf(stderr, "usage: %s pathwalk|longpath|getdents|getppid|check WARMUP COUNT\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	warmup = bench_count(argv[2], "WARMUP");
	count = bench_count(argv[3], "COUNT");

	if (!strcmp(mode, "pathwalk")) {
		char (*paths)[PATH_BYTES] = bench_map(4096 * ((FILES * PATH_BYTES + 4095) / 4096),
						      4096, MADV_NOHUGEPAGE);
		unsigned short order[FILES];
		uint64_t rng = 0x853c49e6748fea9bULL;
		unsigned long next = 0, bytes = 0;

		enter(base_dir());
		build_tree(paths);
		/* a fixed random order: consecutive calls walk unrelated branches */
		for (unsigned int i = 0; i < FILES; i++)
			order[i] = (unsigned short)i;
		for (unsigned int i = FILES - 1; i > 0; i--) {
			unsigned int j = (unsigned int)bench_below(&rng, i + 1);
			unsigned short t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (unsigned int i = 0; i < FILES; i++)
			bytes += strlen(paths[i]);
		bench_detail_begin();
		run_pathwalk(paths, order, warmup, &next);
		bench_region_begin();
		run_pathwalk(paths, order, count, &next);
		bench_region_end();
		ops = count;
		printf("uaccess_bench mode=pathwalk files=%u mean_path=%lu ops=%lu\n", FILES,
		       bytes / FILES, ops);
	} else if (!strcmp(mode, "longpath")) {
		char *path = bench_map(4096 * ((LONG_PATH_BYTES + 1 + 4095) / 4096), 4096,
				       MADV_NOHUGEPAGE);
		static const char head[] = "/uaccess_bench_enoent";
		size_t at = strlen(head);

		/* then "/" and 199 'a' per component (each under NAME_MAX) */
		memcpy(path, head, at);
		while (at < LONG_PATH_BYTES) {
			path[at] = (at - strlen(head)) % 200 == 0 ? '/' : 'a';
			at++;
		}
		path[LONG_PATH_BYTES] = '\0';
		bench_detail_begin();
		run_longpath(path, warmup);
		bench_region_begin();
		run_longpath(path, count);
		bench_region_end();
		ops = count;
		printf("uaccess_bench mode=longpath path=%d ops=%lu\n", LONG_PATH_BYTES, ops);
	} else if (!strcmp(mode, "getdents")) {
		char *buffer = bench_map(DENT_BUFFER, 4096, MADV_NOHUGEPAGE);
		unsigned long entries, bytes, changed = 0;
		int fd;

		enter(base_dir());
		build_dents();
		fd = open("uaccess_bench_dents", O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			perror("open uaccess_bench_dents");
			return 1;
		}
		entries = dents_entries(fd, buffer);
		bytes = dents_pass(fd, buffer);
		bench_detail_begin();
		for (unsigned long i = 0; i < warmup; i++)
			dents_pass(fd, buffer);
		bench_region_begin();
		for (unsigned long i = 0; i < count; i++)
			changed |= dents_pass(fd, buffer) ^ bytes;
		bench_region_end();
		if (changed) {
			fprintf(stderr, "getdents64: directory changed during the run\n");
			return 1;
		}
		ops = count * entries;
		printf("uaccess_bench mode=getdents entries=%lu passes=%lu ops=%lu\n", entries,
		       count, ops);
	} else if (!strcmp(mode, "getppid")) {
		bench_detail_begin();
		run_getppid(warmup);
		bench_region_begin();
		run_getppid(count);
		bench_region_end();
		ops = count;
		printf("uaccess_bench mode=getppid ops=%lu\n", ops);
	} else if (!strcmp(mode, "check")) {
		/* No warm-up loop: the core model starts at the region (its TLBs and
		 * predictors cold, the caches warmed by the fast CPU). */
		bench_detail_begin();
		bench_region_begin();
		ops = run_check(count);
		bench_region_end();
		printf("uaccess_bench mode=check rounds=%lu ops=%lu\n", count, ops);
	} else {
		fprintf(stderr, "unknown mode '%s' (valid: pathwalk, longpath, getdents, getppid, check)\n",
			mode);
		return 2;
	}
	return 0;
}
