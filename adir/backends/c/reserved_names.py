"""Names that the C headers the generated files include may define, so a C name of a symbol
must not be one of them (`names.py`).

`C_LIBRARY` is every identifier and macro not starting with `_` that `<stddef.h>`, `<stdint.h>`,
`<math.h>`, `<string.h>`, `<stdio.h>` and `<stdlib.h>` declare under `-std=c99` and under the
compilers' default `-std=gnu17` (glibc, with gcc and clang), and under arm-none-eabi-gcc
(newlib): e.g. `index`, `y1`, `random` and `linux` are only there in the GNU modes, yet a plain
`cc model.c` uses them. Listed by `clang -Xclang -ast-dump=json` (top-level functions,
variables, typedefs, enumerators) and `-E -dM` (macros) on a file that includes the six headers.

`CMSIS_DSP` is every macro of CMSIS-DSP's `Include/` (ARM-software/CMSIS-DSP) other than its
`ARM_`/`arm_` names and include guards (those prefixes are refused as a whole), e.g. `PI`, `MAX`,
`STEP`: `--c-kernels=cmsis-dsp` includes `arm_math.h` before the model's code.
"""

C_LIBRARY = frozenset(
    """
    BIG_ENDIAN BUFSIZ BYTE_ORDER EOF EXIT_FAILURE EXIT_SUCCESS FD_CLR FD_ISSET FD_SET FD_SETSIZE
    FD_ZERO FILE FILENAME_MAX FOPEN_MAX FP_ILOGB0 FP_ILOGBNAN FP_INFINITE FP_NAN FP_NORMAL
    FP_SUBNORMAL FP_ZERO HAVE_INITFINI_ARRAY HUGE_VAL HUGE_VALF HUGE_VALL INFINITY INT16_C INT16_MAX
    INT16_MIN INT32_C INT32_MAX INT32_MIN INT64_C INT64_MAX INT64_MIN INT8_C INT8_MAX INT8_MIN
    INTMAX_C INTMAX_MAX INTMAX_MIN INTPTR_MAX INTPTR_MIN INT_FAST16_MAX INT_FAST16_MIN
    INT_FAST32_MAX INT_FAST32_MIN INT_FAST64_MAX INT_FAST64_MIN INT_FAST8_MAX INT_FAST8_MIN
    INT_LEAST16_MAX INT_LEAST16_MIN INT_LEAST32_MAX INT_LEAST32_MIN INT_LEAST64_MAX INT_LEAST64_MIN
    INT_LEAST8_MAX INT_LEAST8_MIN LITTLE_ENDIAN L_ctermid L_tmpnam MATH_ERREXCEPT MATH_ERRNO
    MAXFLOAT MB_CUR_MAX M_1_PI M_2_PI M_2_SQRTPI M_3PI_4 M_E M_INVLN2 M_IVLN10 M_LN10 M_LN2 M_LN2HI
    M_LN2LO M_LOG10E M_LOG2E M_LOG2_E M_PI M_PI_2 M_PI_4 M_SQRT1_2 M_SQRT2 M_SQRT3 M_SQRTPI M_TWOPI
    NAN NFDBITS NULL PDP_ENDIAN PTHREAD_CREATE_DETACHED PTHREAD_CREATE_JOINABLE
    PTHREAD_EXPLICIT_SCHED PTHREAD_INHERIT_SCHED PTHREAD_SCOPE_PROCESS PTHREAD_SCOPE_SYSTEM
    PTRDIFF_MAX PTRDIFF_MIN P_tmpdir RAND_MAX SCHED_FIFO SCHED_OTHER SCHED_RR SEEK_CUR SEEK_END
    SEEK_SET SIG_ATOMIC_MAX SIG_ATOMIC_MIN SIZE_MAX TIMESPEC_TO_TIMEVAL TIMEVAL_TO_TIMESPEC TMP_MAX
    UINT16_C UINT16_MAX UINT32_C UINT32_MAX UINT64_C UINT64_MAX UINT8_C UINT8_MAX UINTMAX_C
    UINTMAX_MAX UINTPTR_MAX UINT_FAST16_MAX UINT_FAST32_MAX UINT_FAST64_MAX UINT_FAST8_MAX
    UINT_LEAST16_MAX UINT_LEAST32_MAX UINT_LEAST64_MAX UINT_LEAST8_MAX WCHAR_MAX WCHAR_MIN
    WCONTINUED WEXITED WEXITSTATUS WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED WINT_MAX WINT_MIN
    WNOHANG WNOWAIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED a64l abort abs acos acosf acosh acoshf
    acoshl acosl aligned_alloc alloca arc4random arc4random_buf arc4random_uniform asin asinf asinh
    asinhf asinhl asinl asiprintf asniprintf asnprintf at_quick_exit atan atan2 atan2f atan2l atanf
    atanh atanhf atanhl atanl atexit atof atoff atoi atol atoll bcmp bcopy be16toh be32toh be64toh
    blkcnt_t blksize_t bsearch bzero caddr_t calloc cbrt cbrtf cbrtl ceil ceilf ceill cfree clearenv
    clearerr clearerr_unlocked clock_t clockid_t copysign copysignf copysignl cos cosf cosh coshf
    coshl cosl ctermid daddr_t dev_t diprintf div div_t double_t dprintf drand48 drand48_r drem
    dremf dreml ecvt ecvt_r erand48 erand48_r erf erfc erfcf erfcl erff erfl exit exp exp2 exp2f
    exp2l expf expl explicit_bzero expm1 expm1f expm1l fabs fabsf fabsl fast_putc fclose fcvt fcvt_r
    fd_mask fd_set fdim fdimf fdiml fdopen feof feof_unlocked ferror ferror_unlocked fflush
    fflush_unlocked ffs ffsl ffsll fgetc fgetc_unlocked fgetpos fgets fileno fileno_unlocked finite
    finitef finitel fiprintf fiscanf float_t flockfile floor floorf floorl fls flsl flsll fma fmaf
    fmal fmax fmaxf fmaxl fmemopen fmin fminf fminl fmod fmodf fmodl fopen fpclassify fpos_t fprintf
    fpurge fputc fputc_unlocked fputs fread fread_unlocked free freopen frexp frexpf frexpl fropen
    fsblkcnt_t fscanf fseek fseeko fsetpos fsfilcnt_t fsid_t ftell ftello ftrylockfile funlockfile
    funopen fwopen fwrite fwrite_unlocked gamma gamma_r gammaf gammaf_r gammal gcvt getc
    getc_unlocked getchar getchar_unlocked getdelim getenv getline getloadavg gets getsubopt getw
    gid_t htobe16 htobe32 htobe64 htole16 htole32 htole64 hypot hypotf hypotl id_t ilogb ilogbf
    ilogbl in_addr_t in_port_t index infinity infinityf initstate initstate_r ino_t int16_t int32_t
    int64_t int8_t int_fast16_t int_fast32_t int_fast64_t int_fast8_t int_least16_t int_least32_t
    int_least64_t int_least8_t intmax_t intptr_t iprintf iscanf isfinite isgreater isgreaterequal
    isinf isinff isinfl isless islessequal islessgreater isnan isnanf isnanl isnormal isunordered
    itoa j0 j0f j0l j1 j1f j1l jn jnf jnl jrand48 jrand48_r key_t l64a labs lcong48 lcong48_r ldexp
    ldexpf ldexpl ldiv ldiv_t le16toh le32toh le64toh lgamma lgamma_r lgammaf lgammaf_r lgammal
    lgammal_r linux llabs lldiv lldiv_t llrint llrintf llrintl llround llroundf llroundl locale_t
    loff_t log log10 log10f log10l log1p log1pf log1pl log2 log2f log2l logb logbf logbl logf logl
    lrand48 lrand48_r lrint lrintf lrintl lround lroundf lroundl malloc math_errhandling max_align_t
    mblen mbstowcs mbtowc memccpy memchr memcmp memcpy memmove memset mkdtemp mkstemp mkstemps
    mktemp mode_t modf modff modfl mrand48 mrand48_r nan nanf nanl nearbyint nearbyintf nearbyintl
    nextafter nextafterf nextafterl nexttoward nexttowardf nexttowardl nlink_t nrand48 nrand48_r
    off_t offsetof on_exit open_memstream pclose perror physadr pid_t popen posix_memalign pow powf
    powl printf pselect pthread_attr_t pthread_barrier_t pthread_barrierattr_t pthread_cond_t
    pthread_condattr_t pthread_key_t pthread_mutex_t pthread_mutexattr_t pthread_once_t
    pthread_rwlock_t pthread_rwlockattr_t pthread_spinlock_t pthread_t ptrdiff_t putc putc_unlocked
    putchar putchar_unlocked putenv puts putw qecvt qecvt_r qfcvt qfcvt_r qgcvt qsort qsort_r quad
    quad_t quick_exit rand rand_r random random_r realloc reallocarray reallocf realpath register_t
    remainder remainderf remainderl remove remquo remquof remquol rename renameat rewind rindex rint
    rintf rintl round roundf roundl rpmatch sbintime_t scalb scalbf scalbl scalbln scalblnf scalblnl
    scalbn scalbnf scalbnl scanf seed48 seed48_r select setbuf setbuffer setenv setlinebuf setstate
    setstate_r setvbuf signbit signgam significand significandf significandl sigset_t sin sinf sinh
    sinhf sinhl sinl siprintf siscanf size_t sniprintf snprintf sprintf sqrt sqrtf sqrtl srand
    srand48 srand48_r srandom srandom_r sscanf ssize_t stderr stdin stdout stpcpy stpncpy strcasecmp
    strcasecmp_l strcat strchr strcmp strcoll strcoll_l strcpy strcspn strdup strerror strerror_l
    strerror_r strlcat strlcpy strlen strlwr strncasecmp strncasecmp_l strncat strncmp strncpy
    strndup strnlen strnstr strpbrk strrchr strsep strsignal strspn strstr strtod strtodf strtof
    strtok strtok_r strtol strtold strtoll strtoq strtoul strtoull strtouq strupr strxfrm strxfrm_l
    suboptarg suseconds_t system tan tanf tanh tanhf tanhl tanl tempnam tgamma tgammaf tgammal
    time_t timer_t timingsafe_bcmp timingsafe_memcmp tmpfile tmpnam tmpnam_r trunc truncf truncl
    u_char u_int u_int16_t u_int32_t u_int64_t u_int8_t u_long u_quad_t u_register_t u_short uid_t
    uint uint16_t uint32_t uint64_t uint8_t uint_fast16_t uint_fast32_t uint_fast64_t uint_fast8_t
    uint_least16_t uint_least32_t uint_least64_t uint_least8_t uintmax_t uintptr_t ulong ungetc unix
    unsetenv useconds_t ushort utoa va_arg va_copy va_end va_list va_start valloc vasiprintf
    vasniprintf vasnprintf vdiprintf vdprintf vfiprintf vfiscanf vfprintf vfscanf viprintf viscanf
    vprintf vscanf vsiprintf vsiscanf vsniprintf vsnprintf vsprintf vsscanf wchar_t wcstombs wctomb
    wint_t y0 y0f y0l y1 y1f y1l yn ynf ynl
    """.split()
)

CMSIS_DSP = frozenset(
    """
    CMPLX_DIM CONTROLLER_Q31_SHIFT COPY_COL_F16 COPY_COL_F32 COPY_COL_F64 COPY_COL_T
    DEFAULT_HOUSEHOLDER_THRESHOLD_F16 DEFAULT_HOUSEHOLDER_THRESHOLD_F32
    DEFAULT_HOUSEHOLDER_THRESHOLD_F64 DELTA_Q15 DELTA_Q31 ELEM F16INFINITY F16_ABSMAX F16_ABSMIN
    F16_MAX F16_MIN F32_ABSMAX F32_ABSMIN F32_MAX F32_MIN F64_ABSMAX F64_ABSMIN F64_MAX F64_MIN
    FAST_MATH_Q15_SHIFT FAST_MATH_Q31_SHIFT FAST_MATH_TABLE_SIZE IAR_ONLY_LOW_OPTIMIZATION_ENTER
    IAR_ONLY_LOW_OPTIMIZATION_EXIT INACTIVELANE INDEX_MASK INPUT_SPACING INVSQRT_MAGIC_F16
    INVSQRT_MAGIC_F32 INVSQRT_NEWTON_MVE_F16 INVSQRT_NEWTON_MVE_F32 INV_NEWTON_INIT_F16
    INV_NEWTON_INIT_F32 LOW_OPTIMIZATION_ENTER LOW_OPTIMIZATION_EXIT MAC_ROW_F16 MAC_ROW_F32
    MAC_ROW_F64 MAS_ROW_F16 MAS_ROW_F32 MAS_ROW_F64 MAX MIN MVE_ASRL_SAT16 MVE_ASRL_SAT32 NO_INLINE
    PI PI_F64 PM_f16 PM_f32 PM_f64 PROW_f16 PROW_f32 PROW_f64 PV_f16 PV_f32 PV_f64 Q15_ABSMAX
    Q15_ABSMIN Q15_MAX Q15_MIN Q31_ABSMAX Q31_ABSMIN Q31_MAX Q31_MIN Q7_ABSMAX Q7_ABSMIN Q7_MAX
    Q7_MIN SCALE_COL_F16 SCALE_COL_F32 SCALE_COL_F64 SCALE_COL_T SCALE_ROW_F16 SCALE_ROW_F32
    SCALE_ROW_F64 SECTION_NOINIT STEP SWAP_COLS_F32 SWAP_COLS_F64 SWAP_ROWS_F16 SWAP_ROWS_F32
    SWAP_ROWS_F64 VMANT_EXP_F16 multAcc_32x32_keep32 multAcc_32x32_keep32_R multSub_32x32_keep32
    multSub_32x32_keep32_R mult_32x32_keep32 mult_32x32_keep32_R mve_cmplx_sum_intra_r_i_f16
    read_q15x2_da read_q15x2_ia read_q7x4_da read_q7x4_ia twiddleCoef twiddleCoefF16
    """.split()
)
