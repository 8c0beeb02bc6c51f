//! The one error type of the core. Every variant says what went wrong and where
//! (file:line for scene files, the parameter key, expected vs given).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A position in a scene file, for error messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loc {
    /// The scene file (or a pseudo-name such as `<string>` or `<dict>`).
    pub file: Arc<str>,
    /// 1-based line; 0 when unknown.
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub col: u32,
}

impl Loc {
    /// A location in `file` at `line:col`.
    pub fn new(file: &str, line: u32, col: u32) -> Self {
        Loc {
            file: file.into(),
            line,
            col,
        }
    }

    /// A location that only names its source, e.g. `<dict>`.
    pub fn unknown(file: &str) -> Self {
        Loc {
            file: file.into(),
            line: 0,
            col: 0,
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.col) {
            (0, _) => write!(f, "{}", self.file),
            (l, 0) => write!(f, "{}:{}", self.file, l),
            (l, c) => write!(f, "{}:{}:{}", self.file, l, c),
        }
    }
}

/// The indefinite article of `word` in a message: "an" before a vowel, else "a".
pub fn a_or_an(word: &str) -> &'static str {
    let vowel = word
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    if vowel {
        "an"
    } else {
        "a"
    }
}

/// `"; did you mean \"x\"?"` for the known name closest to `name` (case ignored), when
/// it is close enough to be a likely typo: at most one edit per four characters
/// (three at most); otherwise empty.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 4).clamp(1, 3);
    known
        .into_iter()
        .map(|k| (edit_distance(&lower, &k.to_lowercase()), k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| format!("; did you mean \"{k}\"?"))
        .unwrap_or_default()
}

/// Edit distance counting insertions, deletions, substitutions and swaps of two
/// neighbouring characters (optimal string alignment), in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j - 1] + cost)
                .min(d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Everything that can go wrong in heliograph's core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed scene syntax (XML or dict).
    #[error("{loc}: {msg}")]
    Parse { loc: Loc, msg: String },

    /// A `type` that names no plugin of its category.
    #[error(
        "{loc}: unknown {category} plugin \"{name}\"{} (known: {known})",
        did_you_mean(name, known.split(", "))
    )]
    UnknownPlugin {
        loc: Loc,
        category: &'static str,
        name: String,
        known: String,
    },

    /// A parameter that is missing, unread, of the wrong type or out of range.
    #[error("{loc}: parameter \"{key}\": {msg}")]
    Param { loc: Loc, key: String, msg: String },

    /// A file that could not be read or written.
    #[error("{}: {msg}", path.display())]
    Io { path: PathBuf, msg: String },

    /// A render request that cannot be served (zero spp, zero-size film, ...).
    #[error("{0}")]
    Render(String),

    /// The render was cancelled before it finished.
    #[error("render cancelled")]
    Cancelled,

    /// CUDA was asked for but is not usable on this machine or build.
    #[error("CUDA unavailable: {0}")]
    CudaUnavailable(String),

    /// A CUDA driver, NVRTC or kernel failure where CUDA itself is usable.
    #[error("CUDA error: {0}")]
    Cuda(CudaError),

    /// An array that cannot be read as asked (an import): its element type, layout or
    /// device.
    #[error("{msg}")]
    Array {
        /// What is wrong with it.
        problem: ArrayProblem,
        /// The message.
        msg: String,
    },
}

/// What went wrong in the CUDA backend where CUDA itself is usable: a driver or NVRTC
/// call (naming what was being done, the module, the kernel or the allocation), a
/// request the kernels cannot serve, or a broken invariant. Driver and NVRTC errors are
/// kept as the text the library gives when the call fails (`error`): formatting a
/// driver error asks the driver, which a message printed later, perhaps in a forked
/// child, must not do.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// A driver call that failed.
    #[error("{what}: {error}")]
    Driver {
        /// What was being done.
        what: String,
        /// The driver's error.
        error: String,
    },

    /// A kernel launch that failed.
    #[error("launching {kernel}: {error}")]
    Launch {
        /// The kernel.
        kernel: String,
        /// The driver's error.
        error: String,
    },

    /// A device allocation or upload that failed for another reason than running out
    /// of memory (which is an [`Error::Render`]).
    #[error("{what} ({bytes} bytes): {error}")]
    Alloc {
        /// What the memory is for.
        what: String,
        /// Its size.
        bytes: usize,
        /// The driver's error.
        error: String,
    },

    /// Page-locked host memory for the transfers that could not be allocated.
    #[error("allocating {} MiB of page-locked staging memory: {error}", *.bytes >> 20)]
    StagingAlloc {
        /// The size asked for.
        bytes: usize,
        /// The driver's error.
        error: String,
    },

    /// A buffer whose size in bytes overflows an address.
    #[error("{what} has more bytes than an address holds")]
    AddressOverflow {
        /// What the buffer is for.
        what: String,
    },

    /// A launch of more threads than a grid holds.
    #[error("{elements} elements are too many for one launch")]
    TooManyElements {
        /// The elements, one thread each.
        elements: u64,
    },

    /// A film of more pixels than the kernels index.
    #[error(
        "a {width}x{height} film has more than 2^32 - 1 pixels, more than the CUDA kernels \
         index{}",
        if *.crops_hint { "; render it in crops (hdrfilm crop_offset_x/y, crop_width/height)" } else { "" }
    )]
    FilmTooLarge {
        /// Film width.
        width: u32,
        /// Film height.
        height: u32,
        /// Whether the message suggests rendering in crops.
        crops_hint: bool,
    },

    /// A kernel file the build did not embed.
    #[error("kernel file \"{file}\" is not embedded")]
    NotEmbedded {
        /// The file, relative to `renderer/kernels/`.
        file: String,
    },

    /// Kernel includes nested past the limit.
    #[error("kernel includes nest too deeply at \"{file}\"")]
    IncludeDepth {
        /// The file included too deep.
        file: String,
    },

    /// An error in a file included from `file` at `line`.
    #[error("{error} (included from {file}:{line})")]
    Included {
        /// The error in the included file.
        error: Box<CudaError>,
        /// The including file.
        file: String,
        /// The line of the `#include` (1-based).
        line: usize,
    },

    /// A module source or name that NVRTC cannot take.
    #[error("{what} of {module} contains a NUL byte")]
    NulByte {
        /// `the source` or `the name`.
        what: &'static str,
        /// The module.
        module: String,
    },

    /// An NVRTC call other than the compile that failed.
    #[error("{call} for {module}: {error}")]
    Nvrtc {
        /// The NVRTC function.
        call: &'static str,
        /// The module.
        module: String,
        /// NVRTC's error.
        error: String,
    },

    /// A module NVRTC could not compile; the log names the kernel file and line.
    #[error("NVRTC could not compile {module} ({error}; options {options:?}):\n{log}")]
    Compile {
        /// The module.
        module: String,
        /// NVRTC's error.
        error: String,
        /// The compile options.
        options: Vec<String>,
        /// NVRTC's log.
        log: String,
    },

    /// A compiled module whose CUBIN NVRTC did not hand out.
    #[error("no CUBIN for {module} ({error}); NVRTC log:\n{log}")]
    Cubin {
        /// The module.
        module: String,
        /// NVRTC's error.
        error: String,
        /// NVRTC's log.
        log: String,
    },

    /// A CUBIN the driver could not load.
    #[error("loading the CUBIN of {module}: {error}")]
    Load {
        /// The module.
        module: String,
        /// The driver's error.
        error: String,
    },

    /// A kernel its module does not have.
    #[error("kernel {kernel} not found in its module: {error}")]
    MissingKernel {
        /// The kernel.
        kernel: String,
        /// The driver's error.
        error: String,
    },

    /// A module compiled without the kernels a render needs.
    #[error("the {module} has no {kernels} kernels")]
    MissingKernels {
        /// The module, as the message names it (`backward module`, `render module
        /// <tag>`).
        module: String,
        /// The kernels it lacks (`ptracer`, `backward`).
        kernels: &'static str,
    },

    /// A render block size the kernels cannot use.
    #[error("render block size {block} is not a multiple of 32 in 32..=1024")]
    BlockSize {
        /// The block size asked for.
        block: u32,
    },

    /// Samples per lane the megakernel cannot use.
    #[error("samples per lane {samples} is not 0 (the default) or a power of two in 1..={max}")]
    SamplesPerLane {
        /// The samples per lane asked for.
        samples: u32,
        /// The most samples of a wave.
        max: u32,
    },

    /// A brute-force limit past the unit records a module holds.
    #[error("brute force up to {records} unit records: at most {max} are supported")]
    BruteForceRecords {
        /// The limit asked for.
        records: u32,
        /// The most unit records of a module.
        max: usize,
    },

    /// A register cap NVRTC does not take.
    #[error("register cap {registers} is outside 16..=255 (0: no cap)")]
    RegisterCap {
        /// The cap asked for.
        registers: u32,
    },

    /// An imported array of too many dimensions.
    #[error("the array has {dims} dimensions; at most {max} can be imported")]
    ImportDims {
        /// Its dimensions.
        dims: usize,
        /// The most that can be imported.
        max: usize,
    },

    /// An imported array whose strides do not match its extents.
    #[error("the array has {extents} extents but {strides} strides")]
    ImportStrides {
        /// Its extents.
        extents: usize,
        /// Its strides.
        strides: usize,
    },

    /// An imported array with a negative extent.
    #[error("the array has a negative extent ({extent})")]
    NegativeExtent {
        /// The extent.
        extent: i64,
    },

    /// An imported array of too many elements.
    #[error("the array has {elements} elements; at most {max} can be imported")]
    ImportElements {
        /// Its elements.
        elements: u64,
        /// The most that can be imported.
        max: u64,
    },

    /// A tensor operation the CUDA tensors do not have for this many operands.
    #[error(
        "TensorXf {op}: not available on CUDA tensors for {arity} operand(s) (available: \
         {available})"
    )]
    UnsupportedOp {
        /// The operation.
        op: String,
        /// Its operands.
        arity: usize,
        /// The operations there are, comma-separated.
        available: String,
    },

    /// A tensor operand on another GPU than the renderer.
    #[error("TensorXf {op}: an operand is on cuda:{operand}, the renderer on cuda:{renderer}")]
    OperandDevice {
        /// The operation.
        op: String,
        /// The operand's GPU.
        operand: usize,
        /// The renderer's GPU.
        renderer: usize,
    },

    /// A texture update on another GPU than the scene.
    #[error("the texture lives on cuda:{texture}, the scene on cuda:{scene}")]
    TextureDevice {
        /// The texture's GPU.
        texture: usize,
        /// The scene's GPU.
        scene: usize,
    },

    /// Device values of another backend.
    #[error("device values of another backend cannot be used here")]
    ForeignValues,

    /// The work that writes a tensor failed.
    #[error("the render that writes this tensor failed: {error}")]
    TensorWrite {
        /// Its error.
        error: Box<Error>,
    },

    /// A consumer stream that could not be made to wait for a tensor.
    #[error("making stream {stream:#x} wait for the tensor: {error}")]
    TensorOrder {
        /// The stream.
        stream: usize,
        /// The error.
        error: Box<Error>,
    },

    /// The kernel time of a render that was not timed.
    #[error("this render was not timed (CudaBackend::set_timing(true))")]
    NotTimed,

    /// A ray count of a `depth` render.
    #[error("count_rays: the depth kernel traces one ray per sample; count those directly")]
    CountRaysDepth,

    /// A scene with more unit records than its brute-force module holds.
    #[error("the scene has {records} unit records but its brute-force module holds {cap}")]
    UnitRecords {
        /// The scene's unit records.
        records: usize,
        /// The module's.
        cap: u32,
    },

    /// A scene array the flat scene does not have.
    #[error("no flat array {name}")]
    MissingArray {
        /// The array.
        name: String,
    },

    /// A scene update applied on the host whose patch of the device copy failed.
    #[error(
        "the update was applied, but patching the scene on the GPU failed ({error}); the \
         next render uploads it again"
    )]
    UpdatePatch {
        /// The patch's error.
        error: Box<Error>,
    },

    /// A lock that a panicking thread left poisoned.
    #[error("{what} lock poisoned")]
    Lock {
        /// The lock (`module`, `tuning`, `staging`, `fence`).
        what: &'static str,
    },

    /// A broken invariant of the backend.
    #[error("internal error: {0}")]
    Internal(String),
}

/// What is wrong with an array or a request for one (Python maps these to `TypeError`,
/// `ValueError`, `BufferError`, `IndexError` and `ValueError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayProblem {
    /// An element type that cannot be converted.
    Dtype,
    /// A shape or strides that cannot be read (negative extents, too many elements or
    /// dimensions).
    Layout,
    /// Memory heliograph cannot read (another device, a non-host array where host
    /// memory is needed).
    Device,
    /// An index that names no element: out of range, or more indices than axes.
    Index,
    /// An argument value that a standard disallows (DLPack's `stream=0`).
    Argument,
}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A parse error at `loc`.
    pub fn parse(loc: &Loc, msg: impl Into<String>) -> Self {
        Error::Parse {
            loc: loc.clone(),
            msg: msg.into(),
        }
    }

    /// A parameter error for `key` at `loc`.
    pub fn param(loc: &Loc, key: &str, msg: impl Into<String>) -> Self {
        Error::Param {
            loc: loc.clone(),
            key: key.to_string(),
            msg: msg.into(),
        }
    }

    /// An I/O error for `path`.
    /// An [`Error::Array`].
    pub fn array(problem: ArrayProblem, msg: impl Into<String>) -> Self {
        Error::Array {
            problem,
            msg: msg.into(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, msg: impl fmt::Display) -> Self {
        Error::Io {
            path: path.into(),
            msg: msg.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_errors_keep_their_text() {
        let cuda = |e: CudaError| Error::Cuda(e).to_string();
        let driver = "DriverError(CUDA_ERROR_LAUNCH_FAILED, \"unspecified launch failure\")";
        assert_eq!(
            cuda(CudaError::Driver {
                what: "creating the render stream".into(),
                error: driver.into(),
            }),
            format!("CUDA error: creating the render stream: {driver}")
        );
        assert_eq!(
            cuda(CudaError::Launch {
                kernel: "hg_render".into(),
                error: driver.into(),
            }),
            format!("CUDA error: launching hg_render: {driver}")
        );
        assert_eq!(
            cuda(CudaError::Alloc {
                what: "the film".into(),
                bytes: 1024,
                error: driver.into(),
            }),
            format!("CUDA error: the film (1024 bytes): {driver}")
        );
        assert_eq!(
            cuda(CudaError::StagingAlloc {
                bytes: 3 << 20 | 5,
                error: driver.into(),
            }),
            format!("CUDA error: allocating 3 MiB of page-locked staging memory: {driver}")
        );
        assert_eq!(
            cuda(CudaError::Compile {
                module: "render.cu[path]".into(),
                error: "NvrtcError(NVRTC_ERROR_COMPILATION)".into(),
                options: vec!["--gpu-architecture=sm_90".into(), "-default-device".into()],
                log: "render.cu(3): error: boom\n".into(),
            }),
            "CUDA error: NVRTC could not compile render.cu[path] \
             (NvrtcError(NVRTC_ERROR_COMPILATION); options [\"--gpu-architecture=sm_90\", \
             \"-default-device\"]):\nrender.cu(3): error: boom\n"
        );
        assert_eq!(
            cuda(CudaError::Load {
                module: "depth.cu".into(),
                error: driver.into(),
            }),
            format!("CUDA error: loading the CUBIN of depth.cu: {driver}")
        );
        assert_eq!(
            cuda(CudaError::Included {
                error: Box::new(CudaError::Included {
                    error: Box::new(CudaError::NotEmbedded {
                        file: "bsdfs/x.cuh".into()
                    }),
                    file: "bsdfs/all.cuh".into(),
                    line: 4,
                }),
                file: "render.cu".into(),
                line: 12,
            }),
            "CUDA error: kernel file \"bsdfs/x.cuh\" is not embedded (included from \
             bsdfs/all.cuh:4) (included from render.cu:12)"
        );
        assert_eq!(
            cuda(CudaError::FilmTooLarge {
                width: 70000,
                height: 70000,
                crops_hint: true,
            }),
            "CUDA error: a 70000x70000 film has more than 2^32 - 1 pixels, more than the CUDA \
             kernels index; render it in crops (hdrfilm crop_offset_x/y, crop_width/height)"
        );
        assert_eq!(
            cuda(CudaError::FilmTooLarge {
                width: 70000,
                height: 70000,
                crops_hint: false,
            }),
            "CUDA error: a 70000x70000 film has more than 2^32 - 1 pixels, more than the CUDA \
             kernels index"
        );
        assert_eq!(
            cuda(CudaError::SamplesPerLane {
                samples: 3,
                max: 32
            }),
            "CUDA error: samples per lane 3 is not 0 (the default) or a power of two in 1..=32"
        );
        assert_eq!(
            cuda(CudaError::MissingKernels {
                module: "render module path_bvh".into(),
                kernels: "ptracer",
            }),
            "CUDA error: the render module path_bvh has no ptracer kernels"
        );
        assert_eq!(
            cuda(CudaError::TensorOrder {
                stream: 0xab,
                error: Box::new(Error::Cuda(CudaError::Driver {
                    what: "making stream 0xab wait for an event".into(),
                    error: driver.into(),
                })),
            }),
            format!(
                "CUDA error: making stream 0xab wait for the tensor: CUDA error: making stream \
                 0xab wait for an event: {driver}"
            )
        );
        assert_eq!(
            cuda(CudaError::TensorWrite {
                error: Box::new(Error::Cuda(CudaError::Driver {
                    what: "the work this waits for failed".into(),
                    error: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
                })),
            }),
            "CUDA error: the render that writes this tensor failed: CUDA error: the work this \
             waits for failed: CUDA_ERROR_ILLEGAL_ADDRESS"
        );
        assert_eq!(
            cuda(CudaError::UnsupportedOp {
                op: "atan2".into(),
                arity: 2,
                available: "add, sub".into(),
            }),
            "CUDA error: TensorXf atan2: not available on CUDA tensors for 2 operand(s) \
             (available: add, sub)"
        );
        assert_eq!(
            cuda(CudaError::UpdatePatch {
                error: Box::new(Error::Render("boom".into())),
            }),
            "CUDA error: the update was applied, but patching the scene on the GPU failed \
             (boom); the next render uploads it again"
        );
        assert_eq!(
            cuda(CudaError::Lock { what: "module" }),
            "CUDA error: module lock poisoned"
        );
        assert_eq!(
            cuda(CudaError::Internal("no image 3".into())),
            "CUDA error: internal error: no image 3"
        );
        assert_eq!(
            cuda(CudaError::CountRaysDepth),
            "CUDA error: count_rays: the depth kernel traces one ray per sample; count those \
             directly"
        );
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        for (a, b, d) in [
            ("", "", 0),
            ("abc", "", 3),
            ("kitten", "sitting", 3),
            ("roughdielectic", "roughdielectric", 1),
            ("diffsue", "diffuse", 1),
            ("bdsf", "bsdf", 1),
            ("é", "e", 1),
        ] {
            assert_eq!(edit_distance(a, b), d, "{a} / {b}");
            assert_eq!(edit_distance(b, a), d, "{b} / {a}");
        }
    }

    #[test]
    fn suggestions_only_for_likely_typos() {
        let known = [
            "diffuse",
            "dielectric",
            "roughdielectric",
            "plastic",
            "point",
        ];
        let s = |n: &str| did_you_mean(n, known);
        assert_eq!(s("difuse"), "; did you mean \"diffuse\"?");
        assert_eq!(s("Diffuse"), "; did you mean \"diffuse\"?");
        assert_eq!(s("roughdielectic"), "; did you mean \"roughdielectric\"?");
        assert_eq!(s("dielectirc"), "; did you mean \"dielectric\"?");
        // far from everything: no guess
        assert_eq!(s("spot"), "");
        assert_eq!(s("principled"), "");
        assert_eq!(s("x"), "");
    }
}
