//! Fuzzes the scene-file parser and builder (see `tests/fuzz/mod.rs` for what a case
//! is). The cases run in a child process that this program supervises: a case that
//! panics, kills the child (abort, stack overflow, out of memory under the memory
//! limit) or runs past the per-case time limit is a finding, saved with its number
//! under `--out`, and the run goes on with the next case in a fresh child.
//!
//! ```text
//! cargo run --release --example fuzz_scene -- [--execs N] [--seconds S] [--seed S]
//!     [--case-ms MS] [--mem-mib MIB] [--out DIR]
//! cargo run --release --example fuzz_scene -- --seed S --case I   # print and run case I
//! ```
//! A reference cycle between objects is bad input like any other: the case must end
//! in a clean error. The summary counts those errors apart from the rest. Exit status 1
//! when anything was found.

#[path = "../tests/fuzz/mod.rs"]
mod fuzz;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fuzz::mutate::{generate, Rng};
use fuzz::{prepare_dir, run_case, seed_pool, Outcome};

/// Command-line settings.
struct Args {
    execs: u64,
    seconds: f64,
    seed: u64,
    case_ms: u64,
    mem_mib: u64,
    out: PathBuf,
    case: Option<u64>,
    worker: Option<(u64, u64)>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        execs: u64::MAX,
        seconds: 60.0,
        seed: 1,
        case_ms: 10_000,
        mem_mib: 4096,
        out: fuzz::repo_root().join("target/fuzz_scene"),
        case: None,
        worker: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--execs" => a.execs = num(val()?)?,
            "--seconds" => a.seconds = val()?.parse().map_err(|e| format!("{flag}: {e}"))?,
            "--seed" => a.seed = num(val()?)?,
            "--case-ms" => a.case_ms = num(val()?)?,
            "--mem-mib" => a.mem_mib = num(val()?)?,
            "--out" => a.out = PathBuf::from(val()?),
            "--case" => a.case = Some(num(val()?)?),
            "--worker" => {
                let from = num(val()?)?;
                a.worker = Some((from, num(val()?)?));
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fuzz_scene: {e}");
            std::process::exit(2);
        }
    };
    let seeds = seed_pool();
    if let Some((from, to)) = args.worker {
        worker(&args, &seeds, from, to);
    } else if let Some(i) = args.case {
        let text = generate(&seeds, &mut Rng::for_case(args.seed, i));
        println!("{text}\n----");
        let case = prepare_dir(&args.out.join("work-case")).expect("work directory");
        println!("{:?}", run_case(&text, &case));
    } else {
        std::process::exit(supervise(&args, &seeds));
    }
}

/// How the builder's error for a reference cycle between objects begins (followed by
/// the objects' names: `reference cycle a -> b -> a: ...`).
const CYCLE_ERROR: &str = "reference cycle ";

/// Runs cases `from..to`, announcing each on stdout before (`S i`) and after
/// (`D i code`), so the supervisor knows which case a dead child was running.
fn worker(args: &Args, seeds: &[String], from: u64, to: u64) {
    let case = prepare_dir(&args.out.join("work")).expect("work directory");
    let mut out = std::io::stdout().lock();
    for i in from..to {
        let _ = writeln!(out, "S {i}").and_then(|_| out.flush());
        let text = generate(seeds, &mut Rng::for_case(args.seed, i));
        let code = match std::panic::catch_unwind(|| run_case(&text, &case)) {
            Ok(Outcome::Ok) => 'o',
            Ok(Outcome::Error(e)) if e.contains(CYCLE_ERROR) => 'c',
            Ok(Outcome::Error(_)) => 'e',
            Err(_) => 'p',
        };
        let _ = writeln!(out, "D {i} {code}").and_then(|_| out.flush());
    }
}

/// Counts of the run.
#[derive(Default)]
struct Tally {
    ok: u64,
    errors: u64,
    cycle_errors: u64,
    findings: Vec<(u64, String)>,
}

/// Runs workers until `execs` cases or `seconds` are done; returns the exit status.
fn supervise(args: &Args, seeds: &[String]) -> i32 {
    let t0 = Instant::now();
    let budget = Duration::from_secs_f64(args.seconds);
    let mut tally = Tally::default();
    let mut next = 0u64;
    let _ = std::fs::create_dir_all(args.out.join("findings"));
    while next < args.execs && t0.elapsed() < budget {
        next = run_worker(args, next, t0 + budget, &mut tally);
    }
    for (i, what) in &tally.findings {
        let text = generate(seeds, &mut Rng::for_case(args.seed, *i));
        let file = args
            .out
            .join(format!("findings/seed{}-case{i}.xml", args.seed));
        let _ = std::fs::write(&file, &text);
        eprintln!("finding: case {i}: {what} (input: {})", file.display());
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "fuzz_scene: seed {} executions {next} in {secs:.0} s ({:.0}/s): {} built, {} errors \
         ({} of them reference cycles), {} findings",
        args.seed,
        next as f64 / secs,
        tally.ok,
        tally.errors + tally.cycle_errors,
        tally.cycle_errors,
        tally.findings.len()
    );
    i32::from(!tally.findings.is_empty())
}

/// Starts a child at case `from` and follows it until it finishes, dies or hangs,
/// or `deadline` passes; returns the next case to run.
fn run_worker(args: &Args, from: u64, deadline: Instant, tally: &mut Tally) -> u64 {
    let mut child = match spawn(args, from) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fuzz_scene: cannot start a worker: {e}");
            std::process::exit(2);
        }
    };
    let lines = read_lines(&mut child);
    let limit = Duration::from_millis(args.case_ms);
    let mut running: Option<(u64, Instant)> = None;
    let mut next = from;
    loop {
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => match record(&line, tally) {
                Some((i, true)) => running = Some((i, Instant::now())),
                Some((i, false)) => {
                    running = None;
                    next = i + 1;
                }
                None => {}
            },
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                if running.is_none() && next == from && from < args.execs {
                    eprintln!(
                        "fuzz_scene: the worker exited ({status}) before running a case: see {}",
                        args.out.join("worker-stderr.log").display()
                    );
                    std::process::exit(2);
                }
                if let Some((i, _)) = running {
                    tally
                        .findings
                        .push((i, format!("the worker died: {status}")));
                    next = i + 1;
                }
                return next;
            }
        }
        if let Some((i, since)) = running {
            if since.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                tally
                    .findings
                    .push((i, format!("no result after {limit:?} (hang)")));
                return i + 1;
            }
        }
        if Instant::now() > deadline || next >= args.execs {
            let _ = child.kill();
            let _ = child.wait();
            return next;
        }
    }
}

/// Counts a `D i code` line; returns the case and whether it started (`S i`).
fn record(line: &str, tally: &mut Tally) -> Option<(u64, bool)> {
    let mut parts = line.split(' ');
    let kind = parts.next()?;
    let i: u64 = parts.next()?.parse().ok()?;
    if kind == "S" {
        return Some((i, true));
    }
    match parts.next()? {
        "o" => tally.ok += 1,
        "e" => tally.errors += 1,
        "c" => tally.cycle_errors += 1,
        _ => tally.findings.push((i, "panicked".into())),
    }
    Some((i, false))
}

/// The child: this program with `--worker`, under an address-space limit (Unix).
fn spawn(args: &Args, from: u64) -> std::io::Result<Child> {
    let exe = std::env::current_exe()?;
    let worker_args = [
        "--worker".to_string(),
        from.to_string(),
        args.execs.to_string(),
        "--seed".into(),
        args.seed.to_string(),
        "--out".into(),
        args.out.display().to_string(),
    ];
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(args.out.join("worker-stderr.log"))?;
    let mut cmd = if cfg!(unix) {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "ulimit -v {} && exec \"$0\" \"$@\"",
                args.mem_mib * 1024
            ))
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    cmd.args(worker_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
}

/// The child's stdout lines, through a channel (so waiting on them can time out).
fn read_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout is piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
