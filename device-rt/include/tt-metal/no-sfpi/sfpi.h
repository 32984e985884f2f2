// sfpi.h for a compiler without Tenstorrent's SFPI extensions (`ttprof build --tt-metal`, TRISC).
//
// SFPI's C++ API (sfpi::vFloat, dst_reg, v_if, ...) ships with Tenstorrent's SFPI compiler, not
// with tt-metal: its values live in the SFPU's eight local registers, which only that compiler
// allocates, so Debian's GCC cannot generate SFPU code at all. But many FPU-only kernels include
// SFPU code they never run (`api/compute/compute_kernel_api.h` defines dozens of inline SFPU
// functions), and a C++ compiler must check every function it reads, run or not. So this header
// *names* SFPI's API and defines none of it: its types, values and functions are declared only
// (templates that accept anything), so code that merely mentions them compiles, and code that
// runs them leaves an undefined reference to `sfpi::ttprof_no_sfpi::...` at link, which
// `ttprof build` reports as SFPU code, naming the function. Nothing here is SFPI's code or its
// declarations: only the names tt-llk and tt-metal's compute API use.
#pragma once

// The instruction-field constants of SFPI's API that tt-llk passes to raw TTI_SFP* macros in
// code every compute kernel includes (Blackhole's ckernel_sfpu_load_config.h): plain numbers,
// with the values the ISA documentation gives (tt-isa-documentation,
// WormholeB0/TensixTile/TensixCoprocessor/SFPLOADI.md).
namespace sfpi {
constexpr unsigned SFPLOADI_MOD0_FLOATB = 0;
constexpr unsigned SFPLOADI_MOD0_FLOATA = 1;
constexpr unsigned SFPLOADI_MOD0_USHORT = 2;
constexpr unsigned SFPLOADI_MOD0_SHORT = 4;
constexpr unsigned SFPLOADI_MOD0_UPPER = 8;
constexpr unsigned SFPLOADI_MOD0_LOWER = 10;
}  // namespace sfpi

#define sfpi_inline inline __attribute__((always_inline))

namespace sfpi {
namespace ttprof_no_sfpi {

// A value of one of SFPI's vector types (`Kind` tells them apart, so overloads on them stay
// distinct). Every operation is declared, none defined.
template <int Kind>
struct vec {
    vec();
    template <class T>
    vec(const T&);
    template <class T>
    vec& operator=(const T&);
    template <class T>
    vec& operator+=(const T&);
    template <class T>
    vec& operator-=(const T&);
    template <class T>
    vec& operator*=(const T&);
    template <class T>
    vec& operator&=(const T&);
    template <class T>
    vec& operator|=(const T&);
    template <class T>
    vec& operator^=(const T&);
    template <class T>
    vec& operator<<=(const T&);
    template <class T>
    vec& operator>>=(const T&);
    vec operator-() const;
    vec operator~() const;
    vec operator!() const;
    vec& operator++();
    vec operator++(int);
    vec& operator--();
    vec operator--(int);
    template <auto... N>
    vec& mode() const;
    template <class T>
    vec& mode(const T&) const;
    template <class A, class B, class... C>
    vec(const A&, const B&, const C&...);
    vec<0> get() const;
    void in_use() const;
};

template <class T>
struct kind_of {
    static constexpr int value = -1;
};
template <int K>
struct kind_of<vec<K>> {
    static constexpr int value = K;
};
template <bool B, class T>
struct only_if {};
template <class T>
struct only_if<true, T> {
    using type = T;
};
// The type of `a op b` when either is one of SFPI's values: the first one's.
template <class A, class B>
using result = typename only_if<
    (kind_of<A>::value >= 0 || kind_of<B>::value >= 0),
    vec<(kind_of<A>::value >= 0 ? kind_of<A>::value : kind_of<B>::value)>>::type;

#define TTPROF_NO_SFPI_OP(op)  \
    template <class A, class B> \
    result<A, B> operator op(const A&, const B&);
TTPROF_NO_SFPI_OP(+)
TTPROF_NO_SFPI_OP(-)
TTPROF_NO_SFPI_OP(*)
TTPROF_NO_SFPI_OP(/)
TTPROF_NO_SFPI_OP(&)
TTPROF_NO_SFPI_OP(|)
TTPROF_NO_SFPI_OP(^)
TTPROF_NO_SFPI_OP(<<)
TTPROF_NO_SFPI_OP(>>)
TTPROF_NO_SFPI_OP(<)
TTPROF_NO_SFPI_OP(<=)
TTPROF_NO_SFPI_OP(>)
TTPROF_NO_SFPI_OP(>=)
TTPROF_NO_SFPI_OP(==)
TTPROF_NO_SFPI_OP(!=)
TTPROF_NO_SFPI_OP(&&)
TTPROF_NO_SFPI_OP(||)
#undef TTPROF_NO_SFPI_OP

// The register files: `dst_reg[i]`, `dst_reg++`, `l_reg[LRegs::LReg0]`.
struct registers {
    template <class I>
    vec<0>& operator[](const I&) const;
    registers& operator++();
    registers operator++(int);
    template <class T>
    registers& operator+=(const T&);
};

// `v_if (..) { .. } v_elseif (..) { .. } v_else { .. } v_endif;`: the condition stack.
struct condition {
    condition();
    template <class T>
    void cc_if(const T&);
    template <class T>
    void cc_elseif(const T&);
    void cc_else();
    template <class T>
    void cc_and(const T&);
};

}  // namespace ttprof_no_sfpi

using vFloat = ttprof_no_sfpi::vec<0>;
using vInt = ttprof_no_sfpi::vec<1>;
using vUInt = ttprof_no_sfpi::vec<2>;
using vFloat16a = ttprof_no_sfpi::vec<3>;
using vFloat16b = ttprof_no_sfpi::vec<4>;
using vSMag = ttprof_no_sfpi::vec<5>;
using vSMag8 = ttprof_no_sfpi::vec<6>;
using vSMag16 = ttprof_no_sfpi::vec<7>;
using vMag = ttprof_no_sfpi::vec<8>;
using vUInt8 = ttprof_no_sfpi::vec<9>;
using vUInt16 = ttprof_no_sfpi::vec<10>;
using vBool = ttprof_no_sfpi::vec<11>;
using vLut8si = ttprof_no_sfpi::vec<12>;
using vLut16ss = ttprof_no_sfpi::vec<13>;
using vLut16ii = ttprof_no_sfpi::vec<14>;
using sFloat16a = ttprof_no_sfpi::vec<15>;
using sFloat16b = ttprof_no_sfpi::vec<16>;
using sLut8si = ttprof_no_sfpi::vec<17>;
using sLut16si = ttprof_no_sfpi::vec<18>;

// SFPI's instruction-field constants beyond SFPLOADI's: declared without a value, so SFPU code
// that names them compiles and code that would encode one with it does not (no value of ours
// can reach an instruction).
extern const unsigned SFPABS_MOD1_INT;
extern const unsigned SFPCAST_MOD1_INT32_TO_FP32_RNE;
extern const unsigned SFPCAST_MOD1_SM32_TO_FP32_RNE;
extern const unsigned SFPENCC_IMM12_BOTH;
extern const unsigned SFPENCC_MOD1_EI_RI;
extern const unsigned SFPENCC_MOD1_EU_R1;
extern const unsigned SFPEXEXP_MOD1_SET_CC_COMP_EXP;
extern const unsigned SFPEXEXP_MOD1_SET_CC_SGN_EXP;
extern const unsigned SFPEXMAN_MOD1_PAD9;
extern const unsigned SFPIADD_MOD1_ARG_2SCOMP_LREG_DST;
extern const unsigned SFPIADD_MOD1_ARG_IMM;
extern const unsigned SFPIADD_MOD1_ARG_LREG_DST;
extern const unsigned SFPIADD_MOD1_CC_GTE0;
extern const unsigned SFPIADD_MOD1_CC_LT0;
extern const unsigned SFPIADD_MOD1_CC_NONE;
extern const unsigned SFPLOAD_MOD0_FMT_SRCB;
extern const unsigned SFPLZ_MOD1_CC_NE0;
extern const unsigned SFPLZ_MOD1_CC_NONE;
extern const unsigned SFPMAD_MOD1_INDIRECT_VA;
extern const unsigned SFPMAD_MOD1_OFFSET_NONE;
extern const unsigned SFPMOV_MOD1_NEGATE;
extern const unsigned SFPMOV_MOD1_CONFIG;
extern const unsigned SFPSETCC_MOD1_LREG_EQ0;
extern const unsigned SFPSETCC_MOD1_LREG_GTE0;
extern const unsigned SFPSETCC_MOD1_LREG_LT0;
extern const unsigned SFPSETCC_MOD1_LREG_NE0;
extern const unsigned SFPSETEXP_MOD1_ARG_EXPONENT;
extern const unsigned SFPSETSGN_MOD1_ARG_IMM;
extern const unsigned SFPSHFT2_MOD1_SHFT_IMM;
extern const unsigned SFPSHFT2_MOD1_SHFT_LREG;
extern const unsigned SFPSHFT2_MOD1_SUBVEC_SHFLROR1;
extern const unsigned SFPSHFT_MOD1_ARG_IMM;
extern const unsigned SFPSTOCHRND_MOD1_FP32_TO_FP16B;
extern const unsigned SFPSTOCHRND_MOD1_FP32_TO_INT16;
extern const unsigned SFPSTOCHRND_MOD1_FP32_TO_INT8;
extern const unsigned SFPSTOCHRND_MOD1_FP32_TO_UINT16;
extern const unsigned SFPSTOCHRND_MOD1_FP32_TO_UINT8;
extern const unsigned SFPSTOCHRND_RND_EVEN;
extern const unsigned SFPSTORE_MOD0_FMT_LO16;
extern const unsigned SFPSTORE_MOD0_FMT_SRCB;
extern const unsigned SFPSWAP_MOD1_SWAP;
extern const unsigned SFPSWAP_MOD1_VEC_MIN_MAX;
extern const unsigned SFP_DESTREG_STRIDE;
extern const unsigned SFP_SRCSREG_STRIDE;
extern const unsigned SFPARECIP_MOD1_RECIP;
extern const unsigned SFPMUL24_MOD1_LOWER;
extern const unsigned SFPMUL24_MOD1_UPPER;
extern const unsigned SFPCONFIG_SRC_RAND;
extern const unsigned CREG_IDX_LUT_SLOPES;
extern const unsigned CREG_IDX_TILEID;
extern const unsigned CREG_IDX_0P837300003;

// A scope that declares high register pressure (`sfpi::lreg_pressure _;`).
struct lreg_pressure {
    lreg_pressure();
    ~lreg_pressure();
};

enum class LRegs { LReg0, LReg1, LReg2, LReg3, LReg4, LReg5, LReg6, LReg7 };
enum class RoundMode { Nearest, NearestEven, NearestStochastic };
enum class DataLayout { Default, F16a, F16b, F32, FSrcB, I32, M32, None, SM16, SM32, SM8, U16, U32, U8 };
enum class ExponentMode { Biased, Unbiased };
enum class MantissaMode { ImplicitOne, NoImplicitOne };
enum class ShiftMode { Arithmetic, Logical };
enum class LutSign { Retain, Update };
enum class LutMode { Fp16x6_HWM3, Fp8x3 };
enum class FractionalHalf { Low, High };

extern ttprof_no_sfpi::registers dst_reg;
extern ttprof_no_sfpi::registers l_reg;
extern vFloat vConst0, vConst1, vConstNeg1, vConst0p8373, vConstLn2, vConst1Ln2, vConstFloatPrgm,
    vConstFloatPrgm0, vConstFloatPrgm1, vConstFloatPrgm2, vConstFloatPrgm3;
extern vInt vConstIntPrgm0, vConstIntPrgm1, vConstIntPrgm2, vConstTileId;

// SFPI's functions, each as two declarations: `f(args..)` and `f<N..>(args..)` give a value,
// `f<Type>(args..)` gives a `Type`.
#define TTPROF_NO_SFPI_FN(name)                     \
    template <class R, class... A>                  \
    R name(const A&...);                            \
    template <auto... N, class... A>                \
    ttprof_no_sfpi::vec<0> name(const A&...);
TTPROF_NO_SFPI_FN(as)
TTPROF_NO_SFPI_FN(reinterpret)
TTPROF_NO_SFPI_FN(convert)
TTPROF_NO_SFPI_FN(abs)
TTPROF_NO_SFPI_FN(exexp)
TTPROF_NO_SFPI_FN(exexp_nodebias)
TTPROF_NO_SFPI_FN(exman)
TTPROF_NO_SFPI_FN(exman8)
TTPROF_NO_SFPI_FN(exman9)
TTPROF_NO_SFPI_FN(copysgn)
TTPROF_NO_SFPI_FN(setexp)
TTPROF_NO_SFPI_FN(setsgn)
TTPROF_NO_SFPI_FN(setsgn2)
TTPROF_NO_SFPI_FN(setman)
TTPROF_NO_SFPI_FN(copyman)
TTPROF_NO_SFPI_FN(addexp)
TTPROF_NO_SFPI_FN(min)
TTPROF_NO_SFPI_FN(max)
TTPROF_NO_SFPI_FN(min_max)
TTPROF_NO_SFPI_FN(clamp)
TTPROF_NO_SFPI_FN(symmetric_clamp)
TTPROF_NO_SFPI_FN(approx_recip)
TTPROF_NO_SFPI_FN(approx_exp)
TTPROF_NO_SFPI_FN(approx_sqrt)
TTPROF_NO_SFPI_FN(shft)
TTPROF_NO_SFPI_FN(fractional_mul)
TTPROF_NO_SFPI_FN(lut)
TTPROF_NO_SFPI_FN(lut2)
TTPROF_NO_SFPI_FN(lut2_sign)
TTPROF_NO_SFPI_FN(lut_init)
TTPROF_NO_SFPI_FN(is_nan)
TTPROF_NO_SFPI_FN(is_inf)
TTPROF_NO_SFPI_FN(is_finite)
TTPROF_NO_SFPI_FN(is_pos)
TTPROF_NO_SFPI_FN(is_neg)
TTPROF_NO_SFPI_FN(nearby)
TTPROF_NO_SFPI_FN(round)
TTPROF_NO_SFPI_FN(rectified_linear_unit)
TTPROF_NO_SFPI_FN(int32_to_uint8)
TTPROF_NO_SFPI_FN(int32_to_int8)
TTPROF_NO_SFPI_FN(int32_to_float)
TTPROF_NO_SFPI_FN(float_to_fp16a)
TTPROF_NO_SFPI_FN(float_to_fp16b)
TTPROF_NO_SFPI_FN(float_to_uint8)
TTPROF_NO_SFPI_FN(float_to_int8)
TTPROF_NO_SFPI_FN(float_to_uint16)
TTPROF_NO_SFPI_FN(float_to_int16)
TTPROF_NO_SFPI_FN(lz)
TTPROF_NO_SFPI_FN(lz_nosgn)
TTPROF_NO_SFPI_FN(vec_swap)
TTPROF_NO_SFPI_FN(vec_min_max)
TTPROF_NO_SFPI_FN(subvec_transp)
TTPROF_NO_SFPI_FN(subvec_shflror1)
TTPROF_NO_SFPI_FN(subvec_shflshr1)
#undef TTPROF_NO_SFPI_FN

}  // namespace sfpi

// The SFPI compiler's builtins that tt-llk calls directly.
template <class... A>
sfpi::ttprof_no_sfpi::vec<0> __builtin_rvtt_sfpmad(const A&...);
template <class... A>
sfpi::ttprof_no_sfpi::vec<0> __builtin_rvtt_sfpgt(const A&...);

#define v_if(x)                                \
    {                                          \
        ::sfpi::ttprof_no_sfpi::condition __cc; \
        __cc.cc_if(x);                         \
        {
#define v_elseif(x)    \
    }                  \
    __cc.cc_elseif(x); \
    {
#define v_else    \
    }             \
    __cc.cc_else(); \
    {
#define v_endif \
    }           \
    }
#define v_block                                \
    {                                          \
        ::sfpi::ttprof_no_sfpi::condition __cc; \
        {
#define v_and(x) __cc.cc_and(x)
#define v_endblock \
    }              \
    }
