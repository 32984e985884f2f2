/*
 * ttprof.h - ttprof's runtime for C and C++ kernels on the Baby RISC-V cores of a Tensix tile.
 *
 * The same runtime as Rust kernels (`ttprof-rt`), the same records in the same ring:
 *
 *   - Only a zone's hot path is here, inline: the instructions of `ttprof-rt`'s `zone.rs`
 *     (open: the anchor load from core-local RAM and the clock, no branch; close: the clock,
 *     the room check and the id's store in its shadow, two subtractions, the time check, two
 *     more halfword stores and the write pointer's bump), on the same two
 *     registers the runtime reserves: `tp` (ring write pointer) and `gp` (write limit). GCC
 *     never allocates either; `ttprof build` still passes -ffixed-gp -ffixed-tp. Do not link
 *     code that uses thread-local storage (it addresses it from `tp`).
 *   - Events, signals, data, value zones' closes and long zones' closes call the shared
 *     record routines of `libttprof_rt_c.a` (ttprof-rt's `records.rs`, the very code Rust
 *     kernels call) with `jal t0`: a few instructions per site, one copy of the routines.
 *   - Everything else (slow paths, sum totals, the launch and its wrapper zones) calls the C
 *     ABI of `libttprof_rt_c.a`, which is `ttprof-rt` itself (`device-rt/src/capi.rs`): one
 *     encoder, one producer, one wire format (`wire.rs`).
 *   - A site (one zone, event, data or sum macro in the source) is a one-byte object in the
 *     ELF section `.ttprof_sites` whose symbol name is its JSON metadata, exactly as the Rust
 *     macros make it (`device-rt/macros`): its address is the id written to the ring. No
 *     hash, no collision, no limit per launch; up to 65536 sites per kernel.
 *
 * Compiled with PROFILE_KERNEL defined (tt-metal's switch; `ttprof build` defines it unless
 * --no-profile), every macro records. Without it every macro expands to nothing: the kernel's
 * .text is byte-identical to the kernel without them.
 *
 * Names are string literals without `"`, `\`, `%` or control characters (they are interned
 * in the symbol table at build time); C++ checks this at compile time.
 *
 * Native API (C and C++):
 *   TTPROF_ZONE("name");                 a zone until the end of the enclosing scope
 *   TTPROF_ZONE_IF("name", active);      the same, recorded only when `active` is true
 *   TTPROF_VALUE_ZONE("name", v);        a zone that carries a 32-bit value
 *   TTPROF_VALUE_ZONE_AS(z, "name", v);  the same, named `z`: TTPROF_VALUE_ZONE_SET(z, v2)
 *   TTPROF_COUNTED_ZONE("name");         a value zone carrying the change of the FPU
 *   TTPROF_COUNTED_ZONE_OF("name", bank); performance counter bank's value over it (or of
 *                                        bank fpu, instrn, unpack, pack, l1): the counter
 *                                        `ttprof run --counters` armed in that bank
 *   TTPROF_EVENT("name");                a point event now
 *   TTPROF_DATA("name", v);              a 64-bit value with the current time
 *   TTPROF_SUM_ZONE("name");             durations summed over the launch, one total at exit
 *   TTPROF_WAIT("name", TTPROF_CB_FRONT(cb));   a zone typed as a wait (the bottleneck
 *   TTPROF_SUM_WAIT("name", TTPROF_CB_BACK(cb)); analysis): TTPROF_CB_FRONT(n),
 *                                        TTPROF_CB_BACK(n), TTPROF_NOC_READ, TTPROF_NOC_WRITE,
 *                                        TTPROF_NOC_ATOMIC, TTPROF_SEMAPHORE(n), TTPROF_SYNC(n),
 *                                        TTPROF_TENSIX_SEMAPHORE(n), TTPROF_TTSYNC; n a constant
 *   TTPROF_SIGNAL("name", TTPROF_CB_PUSH(cb));  the releasing side of a wait, an event on the
 *                                        device: TTPROF_CB_PUSH(n), TTPROF_CB_POP(n),
 *                                        TTPROF_SEM_INC(n), TTPROF_SEM_SET(n), TTPROF_SYNC(n),
 *                                        TTPROF_NOC_READ_DONE, TTPROF_NOC_WRITE_DONE,
 *                                        TTPROF_NOC_ATOMIC_DONE
 *   ttprof_flush();                      publish the records written so far
 *   TTPROF_KERNEL(core, fn);             the entry: `_start` runs `fn` as core's kernel
 *   ttprof_arg(i), get_arg_val<T>(i)     runtime argument i (`ttprof run --arg RISC=v0,v1,..`)
 *
 * With TTPROF_BACKEND_TIMESTAMPER defined, zones, events and data go through the tile's debug
 * timestamper instead of the ring (two stores per zone; see ttprof-rt's stamp.rs); the host
 * must then run with `--backend timestamper`.
 *
 * tt-metal's macros (DeviceZoneScopedN, ...) are in tools/profiler/kernel_profiler.hpp.
 */
#ifndef TTPROF_H
#define TTPROF_H

#include <stdint.h>

#ifdef __cplusplus
#define TTPROF__EXTERN_C extern "C"
#define TTPROF__EXTERN extern "C"
#else
#define TTPROF__EXTERN_C
#define TTPROF__EXTERN extern
#endif

#define TTPROF__STR_(x) #x
#define TTPROF__STR(x) TTPROF__STR_(x)
#define TTPROF__CAT_(a, b) a##b
#define TTPROF__CAT(a, b) TTPROF__CAT_(a, b)
#define TTPROF__INLINE static inline __attribute__((always_inline))

/* ---- Runtime arguments: always available, with or without PROFILE_KERNEL. ---- */

/* This core's runtime arguments (riscv_linker::runtime_args): 256 words, written by the
 * launcher before each launch. Defined by riscv-linker's linker script. */
TTPROF__EXTERN volatile uint32_t __ttprof_runtime_args[];

/* Runtime argument `i` (a 32-bit word). */
TTPROF__INLINE uint32_t ttprof_arg(uint32_t i) { return __ttprof_runtime_args[i]; }

/* The L1 address of runtime argument `i`. */
TTPROF__INLINE uint32_t ttprof_arg_addr(uint32_t i) { return (uint32_t)(uintptr_t)&__ttprof_runtime_args[i]; }

#if defined(__cplusplus) && !defined(TTPROF_NO_GET_ARG_VAL)
/* tt-metal's runtime-argument accessors (dataflow_api.h, compute_kernel_api/common.h). */
inline uint32_t get_arg_addr(int arg_idx) { return ttprof_arg_addr((uint32_t)arg_idx); }
template <typename T>
inline T get_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "ttprof: runtime arguments are 4-byte words (get_arg_val<uint32_t>)");
    return *(volatile T *)(uintptr_t)get_arg_addr(arg_idx);
}
#endif

/* ---- The entry, with or without PROFILE_KERNEL. ---- */

/* TTPROF_KERNEL(core, fn): this image's entry for `core` (brisc, ncrisc, trisc0, trisc1,
 * trisc2: the core the image is linked for; riscv-linker's script refuses another). `_start`
 * (in libttprof_rt_c.a) calls `fn` once per launch, inside the `*-FW`/`*-KERNEL` zones and
 * with the launch's `Run` record, as `ttprof_rt::kernel!` does for Rust. `ttprof build`
 * writes this line for you: `kernel_main` for data movement, tt-metal's
 * `NAMESPACE::MAIN` (e.g. chlkc_math::math_main) for compute. */
#define TTPROF_KERNEL(core, fn) TTPROF__CAT(TTPROF__KERNEL_, core)(fn)
#define TTPROF__KERNEL_brisc(fn) TTPROF__KERNEL(brisc, "BRISC-FW", "BRISC-KERNEL", fn)
#define TTPROF__KERNEL_ncrisc(fn) TTPROF__KERNEL(ncrisc, "NCRISC-FW", "NCRISC-KERNEL", fn)
#define TTPROF__KERNEL_trisc0(fn) TTPROF__KERNEL(trisc0, "TRISC-FW", "TRISC-KERNEL", fn)
#define TTPROF__KERNEL_trisc1(fn) TTPROF__KERNEL(trisc1, "TRISC-FW", "TRISC-KERNEL", fn)
#define TTPROF__KERNEL_trisc2(fn) TTPROF__KERNEL(trisc2, "TRISC-FW", "TRISC-KERNEL", fn)
/* Which core: the linker script of every other core asserts this symbol is absent, and this
 * image references the guard only the named core's script defines (as kernel! does). */
#define TTPROF__KERNEL_GUARDS(core, fn)                                                             \
    TTPROF__EXTERN_C const uint8_t __ttprof_kernel_##core __attribute__((used)) = 0;              \
    TTPROF__EXTERN const uint8_t __ttprof_risc_##core;                                            \
    static const uint8_t *const ttprof__linked_for __attribute__((used)) = &__ttprof_risc_##core; \
    static void ttprof__kernel_entry(void) { fn(); }

#ifdef PROFILE_KERNEL

/* ---- The C ABI of libttprof_rt_c.a (device-rt/src/capi.rs). ---- */

TTPROF__EXTERN_C void ttprof_slow_close(uint32_t id, uint32_t start, uint32_t end) __attribute__((cold));
TTPROF__EXTERN_C void ttprof_close_value(uint32_t id, uint32_t start, uint32_t end, uint32_t value);
TTPROF__EXTERN_C void ttprof_event(uint32_t id);
TTPROF__EXTERN_C void ttprof_data(uint32_t id, uint64_t value);
TTPROF__EXTERN_C void ttprof_flush(void);
TTPROF__EXTERN_C uint32_t ttprof_run(const uint8_t *fw, const uint8_t *kernel, void (*main)(void));

#define TTPROF__KERNEL(core, fw, kn, fn)                                                       \
    TTPROF__KERNEL_GUARDS(core, fn)                                                            \
    TTPROF__EXTERN_C uint32_t __ttprof_main(void) {                                            \
        return ttprof_run((const uint8_t *)(uintptr_t)TTPROF__SITE(zone, fw, 0, ""),            \
                          (const uint8_t *)(uintptr_t)TTPROF__SITE(zone, kn, 0, ""), ttprof__kernel_entry); \
    }

/* ---- Sites. ----
 *
 * `ttprof_site REG, KIND, UID, LINE, "NAME", "FILE", "PACKAGE", "WAIT", "UNIT"` (an assembler
 * macro, defined once per translation unit) defines the site the first time its symbol is
 * seen in this translation unit - copies of the asm that GCC makes when it inlines, unrolls
 * or instantiates a template define nothing more: one source site, one id, as in Rust - and
 * loads its address (the id) into REG. The quoted arguments reach the JSON without their
 * quotes (the assembler strips them). The JSON is `ttprof-rt-macros`' (`"c"` is 0: C has no
 * column); `"u"` is `"UID:UNIT"`, the __COUNTER__ value and the translation unit's main
 * file, so that sites of a header included by two translation units stay two symbols. The
 * symbols are global and hidden (GNU as drops local symbols whose names contain a space).
 * `ttprof_sum` also defines the sum's 16-byte entry of the `.ttprof_sums` table the runtime
 * walks at exit (`ttprof_rt::SumZone`: site, count, total) and loads the entry's address. */
#define TTPROF__JSON_HEAD "\"{\\\"v\\\":1,\\\"k\\\":\\\"\\kind\\\",\\\"n\\\":\\\"\\name\\\",\\\"f\\\":\\\"\\file\\\",\\\"l\\\":\\line,\\\"c\\\":0,\\\"p\\\":\\\"\\pkg\\\""
#define TTPROF__JSON_TAIL ",\\\"u\\\":\\\"\\uid:\\unit\\\"}\""
#define TTPROF__JSON TTPROF__JSON_HEAD TTPROF__JSON_TAIL
#define TTPROF__JSON_W TTPROF__JSON_HEAD ",\\\"w\\\":\\\"\\wait\\\"" TTPROF__JSON_TAIL
#define TTPROF__JSON_S TTPROF__JSON_HEAD ",\\\"s\\\":\\\"\\wait\\\"" TTPROF__JSON_TAIL
#define TTPROF__SITE_DEF(json)                       \
    ".ifndef " json "\n"                            \
    ".pushsection .ttprof_sites,\"a\",@progbits\n"  \
    ".globl " json "\n"                             \
    ".hidden " json "\n"                            \
    json ":\n"                                      \
    ".byte 0\n"                                     \
    ".popsection\n"                                 \
    ".endif\n"
#define TTPROF__SUM_SYM "\"ttprof.sum.\\uid:\\unit\""
__asm__(
    ".ifndef .Lttprof_macros\n"
    ".set .Lttprof_macros, 1\n"
    ".macro ttprof_site reg, kind, uid, line, name, file, pkg, wait, unit\n"
    ".ifb \\wait\n"
    TTPROF__SITE_DEF(TTPROF__JSON)
    "lui \\reg, %hi(" TTPROF__JSON ")\n"
    "addi \\reg, \\reg, %lo(" TTPROF__JSON ")\n"
    ".else\n"
    ".ifc \\kind,event\n"
    TTPROF__SITE_DEF(TTPROF__JSON_S)
    "lui \\reg, %hi(" TTPROF__JSON_S ")\n"
    "addi \\reg, \\reg, %lo(" TTPROF__JSON_S ")\n"
    ".else\n"
    TTPROF__SITE_DEF(TTPROF__JSON_W)
    "lui \\reg, %hi(" TTPROF__JSON_W ")\n"
    "addi \\reg, \\reg, %lo(" TTPROF__JSON_W ")\n"
    ".endif\n"
    ".endif\n"
    ".endm\n"
    ".macro ttprof_sum reg, uid, line, name, file, pkg, wait, unit, kind=sum\n"
    ".ifndef " TTPROF__SUM_SYM "\n"
    ".pushsection .ttprof_sums,\"aw\",@progbits\n"
    ".balign 8\n"
    ".globl " TTPROF__SUM_SYM "\n"
    ".hidden " TTPROF__SUM_SYM "\n"
    TTPROF__SUM_SYM ":\n"
    ".ifb \\wait\n"
    ".word " TTPROF__JSON "\n"
    ".else\n"
    ".word " TTPROF__JSON_W "\n"
    ".endif\n"
    ".word 0, 0, 0\n"
    ".popsection\n"
    ".endif\n"
    "ttprof_site \\reg, sum, \\uid, \\line, \"\\name\", \"\\file\", \"\\pkg\", \"\\wait\", \"\\unit\"\n"
    "lui \\reg, %hi(" TTPROF__SUM_SYM ")\n"
    "addi \\reg, \\reg, %lo(" TTPROF__SUM_SYM ")\n"
    ".endm\n"
    ".endif\n");

#ifdef TTPROF_PACKAGE
#define TTPROF__PKG TTPROF__STR(TTPROF_PACKAGE)
#else
#define TTPROF__PKG "\"\""
#endif

/* The asm text of one site: `name` is a string literal, stringified so that it reaches the
 * assembler with its quotes. Not volatile: GCC hoists the id out of loops like a constant
 * (and drops a site no code records). `wait` is a quoted string with %1 for its index. */
#define TTPROF__SITE_ASM(mac, kind, name, uid, wait)                                              \
    mac " %0, " kind TTPROF__STR(uid) ", " TTPROF__STR(__LINE__) ", " #name ", " TTPROF__STR(__FILE__) \
        ", " TTPROF__PKG ", \"" wait "\", " TTPROF__STR(__BASE_FILE__)
#define TTPROF__SITE_IN(kind, name, uid, wait, index)                                   \
    __extension__({                                                                     \
        uint32_t ttprof__id;                                                            \
        __asm__(TTPROF__SITE_ASM("ttprof_site", #kind ", ", name, uid, wait) : "=r"(ttprof__id) : "i"(index)); \
        ttprof__id;                                                                     \
    })
#define TTPROF__SITE_(kind, name, uid, wait, index) TTPROF__SITE_IN(kind, name, uid, wait, index)
/* A new site of `kind`: its id. */
#define TTPROF__SITE(kind, name, index, wait) TTPROF__SITE_(kind, name, __COUNTER__, wait, index)
#define TTPROF__SUM_IN(name, uid, wait, index)                                          \
    __extension__({                                                                     \
        ttprof_sum_t *ttprof__sum;                                                      \
        __asm__(TTPROF__SITE_ASM("ttprof_sum", "", name, uid, wait) : "=r"(ttprof__sum) : "i"(index)); \
        ttprof__sum;                                                                    \
    })

/* Wait resources for TTPROF_WAIT / TTPROF_SUM_WAIT: (spelling, index). */
#define TTPROF_CB_FRONT(n) "cb_front:%1", (n)
#define TTPROF_CB_BACK(n) "cb_back:%1", (n)
#define TTPROF_SEMAPHORE(n) "semaphore:%1", (n)
#define TTPROF_NOC_READ "noc_read", 0
#define TTPROF_NOC_WRITE "noc_write", 0
#define TTPROF_NOC_ATOMIC "noc_atomic", 0
/* tt-metal's SYNC_WAIT(name, key) / SYNC_SIGNAL(name, key): key a constant. */
#define TTPROF_SYNC(n) "sync:%1", (n)
/* A TRISC waiting on the tile's Tensix semaphore n (reading it at 0xFFE80020 + 4n), and on
 * TTSync (its Tensix thread done): the coprocessor releases them. A semaphore's post is
 * recorded where a TRISC pushes it (TTPROF_TENSIX_SEM_POST below, or TTPROF_TENSIX_POST of
 * ttprof_tensix.h, which pushes and records); TTSync has no signal. */
#define TTPROF_TENSIX_SEMAPHORE(n) "tensix_sem:%1", (n)
#define TTPROF_TTSYNC "ttsync", 0

/* Signal resources for TTPROF_SIGNAL: the releasing side of the waits above. */
#define TTPROF_CB_PUSH(n) "cb_push:%1", (n)
#define TTPROF_CB_POP(n) "cb_pop:%1", (n)
#define TTPROF_SEM_INC(n) "sem_inc:%1", (n)
#define TTPROF_SEM_SET(n) "sem_set:%1", (n)
/* A TRISC pushed SEMPOST of Tensix semaphore n (the coprocessor runs it after the thread's
 * queued work): ends a TTPROF_TENSIX_SEMAPHORE(n) wait on this tile. */
#define TTPROF_TENSIX_SEM_POST(n) "tensix_sem_post:%1", (n)
#define TTPROF_NOC_READ_DONE "noc_read_done", 0
#define TTPROF_NOC_WRITE_DONE "noc_write_done", 0
#define TTPROF_NOC_ATOMIC_DONE "noc_atomic_done", 0

/* ---- Names: string literals the assembler and the JSON take as they are. ---- */
#ifdef __cplusplus
namespace ttprof_detail {
template <unsigned N>
constexpr bool valid_name(const char (&s)[N]) {
    if (N < 2) return false;
    for (unsigned i = 0; i + 1 < N; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\' || c == '%' || c < 0x20 || s[i] == 0) return false;
    }
    return true;
}
template <typename T>
constexpr bool valid_name(const T &) { return true; }
template <typename T>
struct is_str { static constexpr bool value = false; };
template <unsigned N>
struct is_str<const char (&)[N]> { static constexpr bool value = true; };
}  // namespace ttprof_detail
#define TTPROF__CHECK_NAME(name)                                                                     \
    static_assert(::ttprof_detail::is_str<decltype((name))>::value && sizeof(#name) == sizeof(name) + 2 && \
                      ::ttprof_detail::valid_name(name),                                                 \
                  "ttprof: a name is one non-empty string literal without \", \\, % or control characters " \
                  "(it is interned in the kernel ELF at build time)")
#else
/* C has no constant loop over a literal: GCC folds `__builtin_strpbrk` of two literals (at
 * -O0 too) and a call left to this function is a compile error naming the rule (before the
 * asm template would trip over a `%`). */
extern void ttprof__name_has_percent_or_control(void) __attribute__((error(
    "ttprof: a name is one non-empty string literal without \", \\, % or control characters "
    "(it is interned in the kernel ELF at build time)")));
#define TTPROF__NAME_REFUSED                                                                        \
    "%\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18"  \
    "\x19\x1a\x1b\x1c\x1d\x1e\x1f"
#define TTPROF__CHECK_NAME(name)                                                                    \
    _Static_assert(sizeof("" name) > 1 && sizeof(#name) == sizeof(name) + 2,                         \
                   "ttprof: a name is one non-empty string literal without \" or \\ (interned in the kernel ELF)"); \
    if (__builtin_strpbrk(name, TTPROF__NAME_REFUSED)) ttprof__name_has_percent_or_control()
#endif

/* ---- The hot path (ttprof-rt's zone.rs, instruction for instruction). ---- */

#define TTPROF__SHORT_LIMIT 32768u /* wire::SHORT_LIMIT */

/* The hot word's page in core-local RAM (riscv_linker::profiler::HOT_WORD): a constant GCC hoists. */
TTPROF__INLINE uint32_t ttprof__hot_page(void) {
    uint32_t p;
    __asm__("lui %0, %%hi(__ttprof_hot)" : "=r"(p));
    return p;
}

/* This RISC's hot word (its anchor; 0: recording off) from core-local RAM: one `lw`, latency 2. */
TTPROF__INLINE uint32_t ttprof__load_anchor(void) {
    uint32_t a;
    __asm__ volatile("lw %0, %%lo(__ttprof_hot)(%1)" : "=r"(a) : "r"(ttprof__hot_page()));
    return a;
}

/* The wall clock's page: a constant GCC hoists. */
TTPROF__INLINE uint32_t ttprof__clock_page(void) {
    uint32_t p;
    __asm__("lui %0, %%hi(__ttprof_wall_clock_l)" : "=r"(p));
    return p;
}

/* The wall clock's low word, read as a compiler barrier (a zone times exactly its code). */
TTPROF__INLINE uint32_t ttprof__zone_clock(void) {
    uint32_t v;
    __asm__ volatile("lw %0, %%lo(__ttprof_wall_clock_l)(%1)" : "=r"(v) : "r"(ttprof__clock_page()) : "memory");
    return v;
}

/* The wall clock's low word, a plain volatile read (sum zones, value zones' close). */
TTPROF__INLINE uint32_t ttprof__clock_lo(void) {
    uint32_t v;
    __asm__ volatile("lw %0, %%lo(__ttprof_wall_clock_l)(%1)" : "=r"(v) : "r"(ttprof__clock_page()));
    return v;
}

#ifdef TTPROF_BACKEND_TIMESTAMPER
/* ---- The timestamper backend (ttprof-rt's `timestamper` feature, stamper.rs): zones, events
 * and data are 96-bit events of the tile's debug timestamper, in the token format of
 * ttprof-rt's stamp.rs (bits 0..3 = 4, 3..6 the RISC, 6..8 the kind, 8..16 a payload count or
 * index, 16..32 the site id or 16 value bits). A zone is two stores, no clock read, no ring
 * write; the run marker, the wrapper zones and sum zones stay in the ring. The host must own
 * the timestamper (`ttprof run --backend timestamper`). ---- */
TTPROF__EXTERN const uint8_t __ttprof_risc_index[];

TTPROF__INLINE uint32_t ttprof__token(uint32_t kind, uint32_t count, uint32_t high) {
    return (high << 16) | ((count & 0xFFu) << 8) | (kind << 6) | ((uint32_t)(uintptr_t)__ttprof_risc_index << 3) | 4u;
}

/* One event: a store to RISCV_DEBUG_REG_TIMESTAMP (0xFFB121FC), a compiler barrier. */
TTPROF__INLINE void ttprof__stamp(uint32_t token) {
    __asm__ volatile("sw %0, 0x1FC(%1)" : : "r"(token), "r"(0xFFB12000u) : "memory");
}

typedef struct ttprof_zone { uint32_t id; } ttprof_zone_t;

TTPROF__INLINE ttprof_zone_t ttprof__zone_open(uint32_t id) {
    ttprof_zone_t z = {id};
    ttprof__stamp(ttprof__token(0, 0, id & 0xFFFFu));
    return z;
}

/* An inactive zone keeps id 0x10000: no site has it, and its close stores nothing. */
TTPROF__INLINE ttprof_zone_t ttprof__zone_open_if(uint32_t id, int active) {
    if (!active) {
        ttprof_zone_t z = {0x10000u};
        return z;
    }
    return ttprof__zone_open(id);
}

TTPROF__INLINE void ttprof__zone_close(ttprof_zone_t *z) {
    if (z->id <= 0xFFFFu) ttprof__stamp(ttprof__token(1, 0, z->id));
}

typedef struct ttprof_value_zone { uint32_t id, value; } ttprof_value_zone_t;

TTPROF__INLINE ttprof_value_zone_t ttprof__value_zone_open(uint32_t id, uint32_t value) {
    ttprof_value_zone_t v = {id, value};
    ttprof__stamp(ttprof__token(0, 0, id & 0xFFFFu));
    return v;
}

TTPROF__INLINE void ttprof__value_zone_close(ttprof_value_zone_t *z) {
    ttprof__stamp(ttprof__token(1, 2, z->id & 0xFFFFu));
    ttprof__stamp(ttprof__token(3, 0, z->value & 0xFFFFu));
    ttprof__stamp(ttprof__token(3, 1, z->value >> 16));
}

TTPROF__INLINE void ttprof__value_zone_set(ttprof_value_zone_t *z, uint32_t value) { z->value = value; }

/* A counted zone's close: `now` is the counter read at the close, z->value its value at the open. */
TTPROF__INLINE void ttprof__counted_close(ttprof_value_zone_t *z, uint32_t now) {
    z->value = now - z->value;
    ttprof__value_zone_close(z);
}

TTPROF__INLINE void ttprof__stamp_event(uint32_t id) { ttprof__stamp(ttprof__token(2, 0, id & 0xFFFFu)); }

TTPROF__INLINE void ttprof__stamp_data(uint32_t id, uint64_t value) {
    ttprof__stamp(ttprof__token(2, 4, id & 0xFFFFu));
    for (uint32_t i = 0; i < 4; i++) ttprof__stamp(ttprof__token(3, i, (uint32_t)(value >> (16 * i)) & 0xFFFFu));
}
#define TTPROF__EVENT_CALL ttprof__stamp_event
#define TTPROF__DATA_CALL ttprof__stamp_data

#else /* the ring */

/* A zone: its start, the anchor its open loaded (non-zero exactly when it is recorded), its site. */
typedef struct ttprof_zone { uint32_t start, anchor, id; } ttprof_zone_t;

/* The hot word, then the wall clock: two loads back to back, no branch (the close's guard
 * tests the anchor); a compiler barrier like ttprof__zone_clock. */
TTPROF__INLINE ttprof_zone_t ttprof__zone_open(uint32_t id) {
    ttprof_zone_t z;
    __asm__ volatile("lw %0, %%lo(__ttprof_hot)(%2)\n\t"
                     "lw %1, %%lo(__ttprof_wall_clock_l)(%3)"
                     : "=&r"(z.anchor), "=r"(z.start)
                     : "r"(ttprof__hot_page()), "r"(ttprof__clock_page())
                     : "memory");
    z.id = id;
    return z;
}

TTPROF__INLINE ttprof_zone_t ttprof__zone_open_if(uint32_t id, int active) {
    if (!active) {
        ttprof_zone_t z = {0, 0, id};
        return z;
    }
    return ttprof__zone_open(id);
}

/* ---- The shared record routines (ttprof-rt's records.rs, in libttprof_rt_c.a): called with
 * `jal t0`, arguments in a0..a3; they clobber t0..t3 and a0..a3 only and save every other
 * register around their slow path, so a site is a few instructions. ---- */
#define TTPROF__CLOBBERS "t0", "t1", "t2", "t3", "memory"

/* A point event (a signal too): 6 ring bytes. */
TTPROF__INLINE void ttprof__event(uint32_t id) {
    register uint32_t a0 __asm__("a0") = id;
    __asm__ volatile("jal t0, __ttprof_rec_event" : "+r"(a0) : : "a1", "a2", "a3", TTPROF__CLOBBERS);
}

/* A datum: 10 ring bytes when it fits 32 bits (a test GCC folds for constants and widened
 * 32-bit values), else 14. */
TTPROF__INLINE void ttprof__data(uint32_t id, uint64_t value) {
    register uint32_t a0 __asm__("a0") = id, a1 __asm__("a1") = (uint32_t)value;
    register uint32_t a2 __asm__("a2") = (uint32_t)(value >> 32);
    if (a2 == 0) {
        __asm__ volatile("jal t0, __ttprof_rec_data32" : "+r"(a0), "+r"(a1) : : "a2", "a3", TTPROF__CLOBBERS);
    } else {
        __asm__ volatile("jal t0, __ttprof_rec_data64" : "+r"(a0), "+r"(a1), "+r"(a2) : : "a3", TTPROF__CLOBBERS);
    }
}

/* A recorded zone's close: the end's clock read, then one call of the shared routine
 * (records.rs), which writes the 6-byte record or continues to the long-zone form or the
 * slow close. The site keeps the clock read, the id and the jal: at most 48 bytes of code
 * per zone site (issue 39). */
TTPROF__INLINE void ttprof__close_fast(uint32_t id, uint32_t start, uint32_t anchor) {
    uint32_t end = ttprof__zone_clock();
    register uint32_t a0 __asm__("a0") = id, a1 __asm__("a1") = start, a2 __asm__("a2") = anchor;
    register uint32_t a3 __asm__("a3") = end;
    __asm__ volatile("jal t0, __ttprof_zone_end" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3) : : TTPROF__CLOBBERS);
}

/* The guard: one forward beqz in the hot path itself, not taken (predicted) while recording is on. */
TTPROF__INLINE void ttprof__zone_close(ttprof_zone_t *z) {
    __asm__ goto("beqz %0, %l[off]" : : "r"(z->anchor) : : off);
    ttprof__close_fast(z->id, z->start, z->anchor);
off:;
}

typedef struct ttprof_value_zone { uint32_t start, anchor, id, value; } ttprof_value_zone_t;

TTPROF__INLINE ttprof_value_zone_t ttprof__value_zone_open(uint32_t id, uint32_t value) {
    ttprof_zone_t z = ttprof__zone_open(id);
    ttprof_value_zone_t v = {z.start, z.anchor, id, value};
    return v;
}

/* The routine reads the end and tests the anchor its open loaded (0: not recorded). */
TTPROF__INLINE void ttprof__value_zone_close(ttprof_value_zone_t *z) {
    register uint32_t a0 __asm__("a0") = z->id, a1 __asm__("a1") = z->start;
    register uint32_t a2 __asm__("a2") = z->anchor, a3 __asm__("a3") = z->value;
    __asm__ volatile("jal t0, __ttprof_rec_value" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3) : : TTPROF__CLOBBERS);
}

TTPROF__INLINE void ttprof__value_zone_set(ttprof_value_zone_t *z, uint32_t value) { z->value = value; }

/* A counted zone's close: `now` is the counter read at the close, z->value its value at the
 * open; the routine subtracts after its clock read (the counter's load latency runs under
 * it). a4 is read, not clobbered. */
TTPROF__INLINE void ttprof__counted_close(ttprof_value_zone_t *z, uint32_t now) {
    register uint32_t a0 __asm__("a0") = z->id, a1 __asm__("a1") = z->start;
    register uint32_t a2 __asm__("a2") = z->anchor, a3 __asm__("a3") = now;
    register uint32_t a4 __asm__("a4") = z->value;
    __asm__ volatile("jal t0, __ttprof_rec_counted" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3) : "r"(a4) : TTPROF__CLOBBERS);
}

#define TTPROF__EVENT_CALL ttprof__event
#define TTPROF__DATA_CALL ttprof__data
#endif /* TTPROF_BACKEND_TIMESTAMPER */

/* One entry of `.ttprof_sums` (ttprof_rt::SumZone, repr(C)). */
typedef struct ttprof_sum { uint32_t site, count; uint64_t total; } __attribute__((aligned(8))) ttprof_sum_t;
typedef struct ttprof_sum_guard { uint32_t start; ttprof_sum_t *sum; } ttprof_sum_guard_t;

TTPROF__INLINE ttprof_sum_guard_t ttprof__sum_open(ttprof_sum_t *sum) {
    ttprof_sum_guard_t g = {ttprof__clock_lo(), sum};
    return g;
}

TTPROF__INLINE void ttprof__sum_close(ttprof_sum_guard_t *g) {
    uint32_t d = ttprof__clock_lo() - g->start;
    g->sum->count += 1;
    g->sum->total += d;
}

/* ---- The macros. ---- */

#define TTPROF__VAR(what, uid) TTPROF__CAT(ttprof__##what##_, uid)
#define TTPROF__ZONE_(name, uid, wait, index)                                                     \
    TTPROF__CHECK_NAME(name);                                                                    \
    ttprof_zone_t TTPROF__VAR(zone, uid) __attribute__((cleanup(ttprof__zone_close), unused)) = \
        ttprof__zone_open(TTPROF__SITE_(zone, name, uid, wait, index))
#define TTPROF__ZONE_IF_(name, active, uid)                                                       \
    TTPROF__CHECK_NAME(name);                                                                    \
    ttprof_zone_t TTPROF__VAR(zone, uid) __attribute__((cleanup(ttprof__zone_close), unused)) = \
        ttprof__zone_open_if(TTPROF__SITE_(zone, name, uid, "", 0), (active) ? 1 : 0)
#define TTPROF__VALUE_ZONE_(var, name, value, uid)                                                     \
    TTPROF__CHECK_NAME(name);                                                                         \
    ttprof_value_zone_t var __attribute__((cleanup(ttprof__value_zone_close), unused)) =             \
        ttprof__value_zone_open(TTPROF__SITE_(value_zone, name, uid, "", 0), (uint32_t)(value))
#define TTPROF__SUM_(name, uid, wait, index)                                                            \
    TTPROF__CHECK_NAME(name);                                                                          \
    ttprof_sum_guard_t TTPROF__VAR(sum, uid) __attribute__((cleanup(ttprof__sum_close), unused)) =     \
        ttprof__sum_open(TTPROF__SUM_IN(name, uid, wait, index))

/* A zone from here to the end of the enclosing scope. */
#define TTPROF_ZONE(name) TTPROF__ZONE_(name, __COUNTER__, "", 0)
/* The same, recorded only when `active` is true (then it costs one branch more). */
#define TTPROF_ZONE_IF(name, active) TTPROF__ZONE_IF_(name, active, __COUNTER__)
/* A zone that carries a 32-bit value (recorded when it ends). */
#define TTPROF_VALUE_ZONE(name, value) TTPROF__VALUE_ZONE_1(name, value, __COUNTER__)
#define TTPROF__VALUE_ZONE_1(name, value, uid) TTPROF__VALUE_ZONE_(TTPROF__VAR(value_zone, uid), name, value, uid)
/* The same, in a variable `var` whose value TTPROF_VALUE_ZONE_SET(var, v) replaces. */
#define TTPROF_VALUE_ZONE_AS(var, name, value) TTPROF__VALUE_ZONE_2(var, name, value, __COUNTER__)
/* Replaces the value the value zone `var` records when it ends. */
#define TTPROF_VALUE_ZONE_SET(var, value) ttprof__value_zone_set(&(var), (uint32_t)(value))
#define TTPROF__VALUE_ZONE_2(var, name, value, uid) TTPROF__VALUE_ZONE_(var, name, value, uid)
/* A counted zone: a value zone whose value is the change of a performance counter bank's
 * value register (PERF_CNT_OUT_H) between just after it opens and just before it closes. */
#define TTPROF__PERF_OUT_H_fpu 0xFFB12124u
#define TTPROF__PERF_OUT_H_instrn 0xFFB12104u
#define TTPROF__PERF_OUT_H_unpack 0xFFB1210Cu
#define TTPROF__PERF_OUT_H_pack 0xFFB12114u
#define TTPROF__PERF_OUT_H_l1 0xFFB1211Cu
typedef struct ttprof_counted_zone { ttprof_value_zone_t zone; uint32_t reg; } ttprof_counted_zone_t;
TTPROF__INLINE uint32_t ttprof__counter(uint32_t reg) { return *(volatile uint32_t *)(uintptr_t)reg; }
TTPROF__INLINE ttprof_counted_zone_t ttprof__counted_zone_open(uint32_t id, uint32_t reg) {
    ttprof_counted_zone_t c;
    c.zone = ttprof__value_zone_open(id, 0);
    c.reg = reg;
    c.zone.value = ttprof__counter(reg);
    return c;
}
TTPROF__INLINE void ttprof__counted_zone_close(ttprof_counted_zone_t *c) {
    ttprof__counted_close(&c->zone, ttprof__counter(c->reg));
}
#define TTPROF__COUNTED_ZONE_(name, bank, uid)                                                          \
    TTPROF__CHECK_NAME(name);                                                                         \
    ttprof_counted_zone_t TTPROF__VAR(counted_zone, uid) __attribute__((cleanup(ttprof__counted_zone_close), unused)) = \
        ttprof__counted_zone_open(TTPROF__SITE_(counted_##bank, name, uid, "", 0), TTPROF__PERF_OUT_H_##bank)
#define TTPROF_COUNTED_ZONE(name) TTPROF__COUNTED_ZONE_(name, fpu, __COUNTER__)
#define TTPROF_COUNTED_ZONE_OF(name, bank) TTPROF__COUNTED_ZONE_(name, bank, __COUNTER__)
/* A point event now. */
#define TTPROF_EVENT(name)                          \
    do {                                            \
        TTPROF__CHECK_NAME(name);                   \
        TTPROF__EVENT_CALL(TTPROF__SITE(event, name, 0, "")); \
    } while (0)
/* A 64-bit value with the current time (tt-metal's TS_DATA). */
#define TTPROF_DATA(name, value)                                          \
    do {                                                                  \
        TTPROF__CHECK_NAME(name);                                         \
        TTPROF__DATA_CALL(TTPROF__SITE(data, name, 0, ""), (uint64_t)(value));  \
    } while (0)
/* Durations summed over the launch and written once, at kernel exit (ZONE_TOTAL). */
#define TTPROF_SUM_ZONE(name) TTPROF__SUM_(name, __COUNTER__, "", 0)
/* A zone typed as a wait on a resource (TTPROF_CB_FRONT(n), ...): on the device exactly a zone. */
#define TTPROF_WAIT(name, resource) TTPROF__WAIT_1(name, __COUNTER__, resource)
#define TTPROF__WAIT_1(name, uid, ...) TTPROF__ZONE_(name, uid, __VA_ARGS__)
/* A sum zone typed as a wait. */
#define TTPROF_SUM_WAIT(name, resource) TTPROF__SUM_WAIT_1(name, __COUNTER__, resource)
#define TTPROF__SUM_WAIT_1(name, uid, ...) TTPROF__SUM_(name, uid, __VA_ARGS__)
/* A signal (TTPROF_CB_PUSH(n), ...): the releasing side of a wait; on the device exactly an event. */
#define TTPROF_SIGNAL(name, resource) TTPROF__SIGNAL_1(name, resource)
#define TTPROF__SIGNAL_1(name, ...) TTPROF__SIGNAL_2(name, __VA_ARGS__)
#define TTPROF__SIGNAL_2(name, wait, index)                 \
    do {                                                    \
        TTPROF__CHECK_NAME(name);                           \
        TTPROF__EVENT_CALL(TTPROF__SITE(event, name, index, wait)); \
    } while (0)

#else /* !PROFILE_KERNEL: every macro is gone. */

#define TTPROF__KERNEL(core, fw, kn, fn) \
    TTPROF__KERNEL_GUARDS(core, fn)      \
    TTPROF__EXTERN_C uint32_t __ttprof_main(void) { ttprof__kernel_entry(); return 0; }

#define TTPROF_ZONE(name)
#define TTPROF_ZONE_IF(name, active)
#define TTPROF_VALUE_ZONE(name, value)
#define TTPROF_VALUE_ZONE_AS(var, name, value)
#define TTPROF_VALUE_ZONE_SET(var, value)
#define TTPROF_COUNTED_ZONE(name)
#define TTPROF_COUNTED_ZONE_OF(name, bank)
#define TTPROF_EVENT(name)
#define TTPROF_DATA(name, value)
#define TTPROF_SUM_ZONE(name)
#define TTPROF_WAIT(name, resource)
#define TTPROF_SUM_WAIT(name, resource)
#define TTPROF_SIGNAL(name, resource)

#endif /* PROFILE_KERNEL */

/* Publishes the records written so far (tt-metal's kernel_profiler::quick_push()): the
 * consumer can read them now rather than at the next slow path or at exit. Nothing is lost
 * without it. Without PROFILE_KERNEL it does nothing. */
TTPROF__INLINE void ttprof_publish(void) {
#ifdef PROFILE_KERNEL
    ttprof_flush();
#endif
}

#endif /* TTPROF_H */
