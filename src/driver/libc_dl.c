/*
 * Finds the C library's own dlsym and dlvsym. This library exports both, and
 * the dynamic linker binds even a versioned reference (dlvsym@GLIBC_2.2.5)
 * made from inside it to its own unversioned definition, so the real ones
 * are read straight from the loaded objects' dynamic symbol tables
 * (GNU hash + version definitions), preferring GLIBC_2.34 over GLIBC_2.2.5.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "driver/real.h"

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

/* Read by dlsym_entry.S on every RTLD_NEXT lookup. */
dlsym_fn ag_hook_real_dlsym;
dlvsym_fn ag_hook_real_dlvsym;

struct query {
	const char *name;
	const char *version;
	const void *self_base;
	void *result;
};

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static const char *version_name(const ElfW(Verdef) * vd, unsigned ndx, const char *strtab)
{
	for (;;) {
		if (vd->vd_ndx == ndx) {
			const ElfW(Verdaux) *aux = (const void *)((const char *)vd + vd->vd_aux);
			return strtab + aux->vda_name;
		}
		if (vd->vd_next == 0)
			return NULL;
		vd = (const void *)((const char *)vd + vd->vd_next);
	}
}

static int search_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct query *q = data;
	ElfW(Addr) base = info->dlpi_addr;
	if (q->result || (const void *)base == q->self_base)
		return q->result != NULL;
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(base + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *hash = NULL;
	const ElfW(Half) *versym = NULL;
	const ElfW(Verdef) *verdef = NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		/* glibc relocates these in place; an unrelocated one is an offset. */
		ElfW(Addr) p = dyn->d_un.d_ptr < base ? dyn->d_un.d_ptr + base : dyn->d_un.d_ptr;
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const void *)p; break;
		case DT_STRTAB: strtab = (const void *)p; break;
		case DT_GNU_HASH: hash = (const void *)p; break;
		case DT_VERSYM: versym = (const void *)p; break;
		case DT_VERDEF: verdef = (const void *)p; break;
		}
	}
	if (!symtab || !strtab || !hash || !versym || !verdef)
		return 0;
	uint32_t nbuckets = hash[0], symoffset = hash[1], bloom_words = hash[2];
	const uint32_t *buckets = (const void *)((const ElfW(Addr) *)&hash[4] + bloom_words);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = gnu_hash(q->name);
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return 0;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];
		const ElfW(Sym) *s = &symtab[i];
		if ((h | 1) == (h2 | 1) && s->st_shndx != SHN_UNDEF &&
		    strcmp(strtab + s->st_name, q->name) == 0) {
			const char *v = version_name(verdef, versym[i] & 0x7fff, strtab);
			if (v && strcmp(v, q->version) == 0) {
				q->result = (void *)(base + s->st_value);
				return 1;
			}
		}
		if (h2 & 1)
			return 0;
	}
}

static void *find_libc_symbol(const char *name)
{
	static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
	Dl_info self;
	dladdr((void *)search_object, &self);
	for (size_t v = 0; v < 2; v++) {
		struct query q = {name, versions[v], self.dli_fbase, NULL};
		dl_iterate_phdr(search_object, &q);
		if (q.result)
			return q.result;
	}
	return NULL;
}

/* Called by dlsym_entry.S before the first forwarded lookup, and by the constructor. */
void *ag_hook_libc_dl_init(void)
{
	if (!__atomic_load_n(&ag_hook_real_dlsym, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&ag_hook_real_dlvsym, (dlvsym_fn)find_libc_symbol("dlvsym"),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&ag_hook_real_dlsym, (dlsym_fn)find_libc_symbol("dlsym"),
				 __ATOMIC_RELEASE);
	}
	return (void *)ag_hook_real_dlsym;
}

void *ag_real_dlsym(void *handle, const char *name)
{
	return ((dlsym_fn)ag_hook_libc_dl_init())(handle, name);
}

void *ag_real_dlvsym(void *handle, const char *name, const char *version)
{
	ag_hook_libc_dl_init();
	return ag_hook_real_dlvsym(handle, name, version);
}
