//! The `heliograph` command-line tool: `render` a Mitsuba 3 scene file, show its
//! objects and parameters with `info`, or list the plugins with `plugins`.
//!
//! It lives in the library so that the Rust binary (`src/main.rs`) and the Python
//! package's `heliograph` command (`heliograph._native._cli_main`) are the same program.
//! It is the one place that uses `anyhow`; it names the crate `heliograph::`, as it did
//! as a binary (lib.rs aliases the crate to itself).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use heliograph::backend::cuda::CudaBackend;
use heliograph::backend::renderer::Renderer;
use heliograph::backend::Backend;
use heliograph::desc::{ObjectDesc, Value};
use heliograph::math::spectrum::Spectrum;
use heliograph::render::RenderOptions;
use heliograph::scene;
use heliograph::session::film::Film;

#[derive(Parser)]
#[command(
    name = "heliograph",
    version,
    about = "A physically based path tracer for Mitsuba 3 scene files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The NVRTC library to use (a libnvrtc.so.13 file); default: $HELIOGRAPH_NVRTC, else the
    /// Python environment's nvidia-cuda-nvrtc wheel, else the system's
    #[arg(long, global = true, value_name = "PATH")]
    nvrtc: Option<PathBuf>,
}

/// `--backend`: the names the core's [`Backend`] knows for the CLI.
fn backend_parser() -> impl TypedValueParser<Value = Backend> {
    PossibleValuesParser::new(["auto", "cpu", "cuda"])
        .map(|name| Backend::from_cli(&name).expect("one of the possible values"))
}

#[derive(Subcommand)]
enum Command {
    /// Render a scene file to an image (.exr: linear float; .png: sRGB 8-bit)
    Render {
        /// The scene file (Mitsuba 3 XML)
        scene: PathBuf,
        /// Output image; defaults to the scene's name with .exr in the current directory
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Samples per pixel (overrides the scene's sampler)
        #[arg(long)]
        spp: Option<u32>,
        /// Random seed
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Where to render: cuda when a usable GPU is present, otherwise the cpu (auto);
        /// every CPU core (cpu); an NVIDIA GPU (cuda)
        #[arg(long, default_value = "auto", value_parser = backend_parser())]
        backend: Backend,
        /// Override a scene parameter declared with <default name=... value=...>
        #[arg(short = 'D', value_name = "NAME=VALUE")]
        define: Vec<String>,
        /// No progress bar
        #[arg(short, long)]
        quiet: bool,
    },
    /// List the objects of a scene file and their parameters; without a scene, every
    /// plugin heliograph has (as `plugins`)
    Info {
        /// The scene file (Mitsuba 3 XML)
        scene: Option<PathBuf>,
        /// Override a scene parameter declared with <default name=... value=...>
        #[arg(short = 'D', value_name = "NAME=VALUE")]
        define: Vec<String>,
    },
    /// List the plugins with their parameters, or print one plugin's manual
    Plugins {
        /// A plugin's scene `type` (e.g. roughplastic): print its manual
        name: Option<String>,
        /// Print the table of every plugin in Markdown (the README's plugin table)
        #[arg(long, conflicts_with = "name")]
        markdown: bool,
    },
}

fn parse_defines(defs: &[String]) -> Result<Vec<(String, String)>> {
    defs.iter()
        .map(|d| match d.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => bail!("-D expects NAME=VALUE, got \"{d}\""),
        })
        .collect()
}

/// Runs the CLI on `args` (the program name first, as `std::env::args_os()` gives them)
/// and returns the process exit code: 0 on success, 1 on an error (printed to stderr),
/// clap's codes for usage errors (2) and `--help`/`--version` (0). The `heliograph`
/// binary and the Python package's `heliograph` command both run this.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let code = run(args);
    // The Python entry point exits through the interpreter, not Rust's runtime.
    let _ = std::io::stdout().flush();
    code
}

fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    heliograph::backend::cuda::nvrtc_lib::set_flag_path(cli.nvrtc);
    let res = match cli.command {
        Command::Render {
            scene,
            output,
            spp,
            seed,
            backend,
            define,
            quiet,
        } => render(
            &scene,
            output,
            RenderOptions { spp, seed },
            backend,
            &define,
            quiet,
        ),
        Command::Info {
            scene: Some(scene),
            define,
        } => info(&scene, &define),
        Command::Info { scene: None, .. } => plugins(None),
        Command::Plugins { markdown: true, .. } => {
            print_all(&heliograph::catalog::markdown_table())
        }
        Command::Plugins { name, .. } => plugins(name.as_deref()),
    };
    if let Err(e) = res {
        eprintln!("error: {e:#}");
        return 1;
    }
    0
}

fn render(
    path: &Path,
    output: Option<PathBuf>,
    opts: RenderOptions,
    backend: Backend,
    define: &[String],
    quiet: bool,
) -> Result<()> {
    let out = output.unwrap_or_else(|| {
        PathBuf::from(path.file_stem().unwrap_or_default()).with_extension("exr")
    });
    // before the scene loads: a bad -o must not cost a whole render
    heliograph::io::check_output_path(&out).with_context(|| "checking the output path (-o)")?;
    let defines = parse_defines(define)?;
    let desc = heliograph::desc::xml::load_file(path, &defines)?;
    let setup = Arc::new(scene::build_scene(&desc)?);
    check_multichannel_output(&setup, &out)?;
    let spp = opts.resolve_spp(&setup.sensor.sampler)?;
    let [w, h] = setup.sensor.film.crop_size;
    let renderer = choose(backend, &setup, quiet)?;
    let start = Instant::now();
    let film = renderer.render(setup.clone(), opts)?;
    let image = follow(film, w as u64 * h as u64 * spp as u64, quiet)?;
    let secs = start.elapsed().as_secs_f64();
    write_film(&setup, &out, image).with_context(|| "writing the output image")?;
    let samples = w as f64 * h as f64 * spp as f64;
    let device = format!("{}, {}", renderer.name(), renderer.device_name());
    println!(
        "rendered {w}x{h} at {spp} spp in {secs:.3} s ({:.2} Msamples/s, {device}) -> {}",
        samples / secs / 1e6,
        out.display()
    );
    Ok(())
}

/// An `aov` film has more channels than PNG and JPEG hold: it is written as an EXR only.
fn check_multichannel_output(setup: &heliograph::scene::RenderSetup, out: &Path) -> Result<()> {
    let exr = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("exr"));
    if setup.aov.is_none() || exr {
        return Ok(());
    }
    bail!(
        "{}: the scene's aov integrator renders a film of {} channels ({}); only an .exr \
         output holds them all: use -o NAME.exr",
        out.display(),
        setup.film_channel_names().len(),
        setup.film_channel_names().join(", ")
    )
}

/// Writes the developed film: a multi-channel EXR with Mitsuba's channel names for an
/// `aov` film, otherwise an RGB(A) image in the format of the extension.
fn write_film(
    setup: &heliograph::scene::RenderSetup,
    out: &Path,
    image: heliograph::io::Image,
) -> heliograph::Result<()> {
    if setup.aov.is_none() {
        return heliograph::io::write_image(out, &image);
    }
    let named = heliograph::io::exr_channels::NamedChannels {
        width: image.width,
        height: image.height,
        names: setup.film_channel_names(),
        data: image.data,
    };
    heliograph::io::exr_channels::write_exr_channels(out, &named)
}

/// The renderer `backend` names (an error if it cannot serve); under `auto`, the GPU's
/// when a usable GPU supports the scene, otherwise the CPU's.
fn choose(
    backend: Backend,
    setup: &heliograph::scene::RenderSetup,
    quiet: bool,
) -> Result<Box<dyn Renderer>> {
    let open = |b: Backend| -> heliograph::Result<Box<dyn Renderer>> {
        let r = b.renderer(|| CudaBackend::new(0).map(Arc::new))?;
        r.check(setup)?;
        Ok(r)
    };
    match (backend, open(backend)) {
        (Backend::Auto, Ok(r)) => {
            if !quiet {
                eprintln!("backend: {} ({}) (auto)", r.name(), r.device_name());
            }
            Ok(r)
        }
        (Backend::Auto, Err(e)) => {
            if !quiet {
                eprintln!("backend: cpu (auto: {e})");
            }
            Ok(open(Backend::Cpu)?)
        }
        (_, r) => Ok(r?),
    }
}

/// Waits for `film`'s image; a render still running in the background is followed by a
/// progress bar.
fn follow(film: Film, total: u64, quiet: bool) -> Result<heliograph::io::Image> {
    if let Some(job) = film.job() {
        let bar = (!quiet).then(|| progress_bar(total));
        // woken by the render's end, not a fixed sleep: a sleep would add up to its
        // length to every render's wall time
        while !job.is_finished() {
            if let Some(b) = &bar {
                b.set_position(job.progress().samples().0);
            }
            job.completion().wait_timeout(Duration::from_millis(50));
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    }
    Ok(film.into_image()?)
}

fn progress_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} rendering [{bar:40}] {percent:>3}% {elapsed}/{duration}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar
}

fn info(path: &Path, define: &[String]) -> Result<()> {
    let defines = parse_defines(define)?;
    let desc = heliograph::desc::xml::load_file(path, &defines)?;
    // building validates every plugin and parameter; report the result
    let loaded = scene::LoadedScene::new(desc)?;
    let setup = loaded.setup();
    print_object(&loaded.desc().root, "", 0);
    let f = &setup.sensor.film;
    println!(
        "\n{} shapes, {} triangles, {} BSDFs, {} emitters; film {}x{} (crop {}x{}), {} spp by default",
        setup.scene.geom.shape_count(),
        setup.scene.geom.mesh.tris.len(),
        setup.scene.bsdfs.len(),
        setup.scene.emitters.len(),
        f.width,
        f.height,
        f.crop_size[0],
        f.crop_size[1],
        setup.sensor.sampler.sample_count
    );
    // the keys Python's traverse(scene) uses (declared by the plugins: desc::params)
    print!(
        "\nparameters (Python traverse keys):\n{}",
        loaded.traverse().table()
    );
    Ok(())
}

/// `heliograph plugins [NAME]`: every registered plugin with its parameters (from its
/// manual's table), by category, or the manual of plugin `name`.
fn plugins(name: Option<&str>) -> Result<()> {
    let registered = heliograph::catalog::registered();
    let mut out = String::new();
    if let Some(name) = name {
        // another name of a plugin (Mitsuba's `prb` is `path`) shows that plugin's manual
        let alias = heliograph::integrators::ALIASES
            .iter()
            .find(|(a, _)| *a == name)
            .map(|(_, to)| *to);
        if let Some(p) = registered.iter().find(|p| p.name == alias.unwrap_or(name)) {
            if alias.is_some() {
                out = format!(
                    "\"{name}\" is another name of {} \"{}\"\n\n",
                    p.category, p.name
                );
            }
            out += &format!("{} \"{}\"\n\n{}", p.category, p.name, p.manual());
        } else {
            let known: Vec<&str> = registered.iter().map(|p| p.name).collect();
            bail!(
                "no plugin \"{name}\"{} (known: {})",
                heliograph::error::did_you_mean(name, known.iter().copied()),
                known.join(", ")
            );
        }
    } else {
        out += "(`heliograph plugins NAME` prints a plugin's manual)\n";
        for group in registered.chunk_by(|a, b| a.category == b.category) {
            let n = group.len();
            let plural = if n == 1 { "" } else { "s" };
            out += &format!("{} ({n} plugin{plural}):\n", group[0].category);
            for p in group {
                out += &format!("  {:<16} {}\n", p.name, p.summary());
                for r in p.parameters() {
                    out += &format!("      {:<24} {}, default {}\n", r.name, r.kind, r.default);
                }
            }
        }
    }
    print_all(&out)
}

/// Writes `text` to stdout; a closed pipe (`| head`) is not an error.
fn print_all(text: &str) -> Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

fn print_object(obj: &ObjectDesc, name: &str, indent: usize) {
    let pad = "  ".repeat(indent);
    let id = obj
        .id
        .as_deref()
        .map(|i| format!(" id=\"{i}\""))
        .unwrap_or_default();
    let label = if name.is_empty() || name.starts_with("_arg_") {
        String::new()
    } else {
        format!(" ({name})")
    };
    println!(
        "{pad}{} \"{}\"{id}{label}  [{}]",
        obj.category.tag(),
        obj.kind,
        obj.loc
    );
    for e in obj.props.entries() {
        match &e.value {
            Value::Object(child) => print_object(child, &e.name, indent + 1),
            v => println!("{pad}  {} = {}", e.name, describe(v)),
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Float(x) => format!("{x}"),
        Value::Int(x) => format!("{x}"),
        Value::Bool(x) => format!("{x}"),
        Value::String(s) => format!("\"{s}\""),
        Value::Rgb(c) => format!("rgb({}, {}, {})", c.x, c.y, c.z),
        Value::Spectrum(s) => match s {
            Spectrum::Uniform(v) => format!("spectrum({v})"),
            Spectrum::Sampled { wavelengths, .. } => format!(
                "spectrum({} samples, {}-{} nm)",
                wavelengths.len(),
                wavelengths[0],
                wavelengths[wavelengths.len() - 1]
            ),
        },
        Value::Point(p) | Value::Vector(p) => format!("({}, {}, {})", p.x, p.y, p.z),
        Value::Transform(t) => format!("{:?}", t.to_rows()),
        Value::Ref(id) => format!("ref \"{id}\""),
        Value::Pixels(p) => format!("{}x{}x{} array", p.height, p.width, p.channels),
        Value::Positions(p) => format!("{} vertex positions", p.len()),
        Value::Object(o) => format!("{} \"{}\"", o.category.tag(), o.kind),
    }
}
