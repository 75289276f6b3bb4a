//! `cargo xtask bench`: what system calls, processes, context switches and
//! profiling cost, on this kernel and on Debian's Linux, in the same QEMU.
//!
//! One static musl program, `tests/bench/bench.c`, runs on both: here as
//! `/bin/bench`, there as the `/init` of an initramfs booted with the
//! `vmlinuz` of Debian's `linux-image-amd64` (fetched once with
//! `apt-get download` into `target/bench/linux/`). Both boots use the same
//! accelerator, CPU model and memory. The profiling benchmarks run once per
//! tick rate (100, 1000, 10000 Hz): this kernel boots at that rate, Linux
//! gets the SIGPROF emulation's timer at that interval (its own tick, and so
//! ITIMER_PROF's resolution, stays Debian's). Results: a table on the
//! terminal (ours, Linux, ratio), `target/bench/results.{json,md}` and a
//! chart of the profiling overhead against the rate, `target/bench/profiling.svg`.
//! `--quick` is a smoke run: fewer iterations, one rate. The figures are of
//! the optimised kernel (`--release` is implied unless `--quick`).
//!
//! Last, the profiled kernel (`--kprof`: every function calls mcount) runs
//! a few of the rows with the kernel profiling itself (kgmon) all along,
//! and a second table sets them beside the plain kernel's; the kernel's
//! own timings (kbench) give mcount's cost per call in cycles (a call in
//! the profiled kernel less the same call in the plain one, which has no
//! mcount) and the clock's cost per sample of the kernel.
//!
//! The disk rows run on an empty ext3 image made fresh for each kernel
//! (`disk_image`), given to both with the same QEMU options
//! (`qemu::disk_args`); Linux's initramfs carries the virtio and ext4
//! modules of its package (`linuxdisk::modules`), which the benchmark loads
//! as its /init.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use crate::build::{self, Boot};
use crate::options::Options;
use crate::{qemu, setup};

/// One result: the value (a median for the micro-benchmarks), its unit,
/// and for the micro-benchmarks the first and third quartiles of the
/// rounds it is the median of.
#[derive(Clone, Debug, PartialEq)]
struct Figure {
    value: f64,
    unit: String,
    quartiles: Option<(f64, f64)>,
}

/// name -> figure
type Results = BTreeMap<String, Figure>;

const RATES: [u32; 3] = [100, 1000, 10_000];

pub fn run(opts: &Options) -> Result<ExitCode, String> {
    let out_dir = build::root().join("target/bench");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let bench = compile(&out_dir)?;
    let kernel = linux_kernel(&out_dir.join("linux"))?;
    let rates: &[u32] = if opts.quick { &[1000] } else { &RATES };
    let mut ours = Results::new();
    let mut linux = Results::new();
    for &hz in rates {
        // Everything at 1000 Hz; only the profiling part at the other rates.
        let args = bench_args(opts.quick, hz, hz != 1000, opts.cpus);
        println!("== this kernel at {hz} Hz: bench {}", args.join(" "));
        let disk = disk_image(&out_dir)?;
        merge(
            &mut ours,
            on_this_kernel(opts, &bench, hz, &args, &disk)?,
            hz,
        );
        println!("== Linux ({}): bench {}", kernel.display(), args.join(" "));
        let disk = disk_image(&out_dir)?;
        merge(
            &mut linux,
            on_linux(opts, &kernel, &bench, &out_dir, &args, &disk)?,
            hz,
        );
    }
    // The profiled kernel (--kprof), profiling itself all along: a few
    // rows against the plain kernel's, and what mcount costs.
    let mut kprof_opts = opts.clone();
    kprof_opts.kprof = true;
    let mut kprof_args = vec!["--kprof".to_string()];
    if opts.quick {
        kprof_args.push("--quick".into());
    }
    println!(
        "== the profiled kernel at 1000 Hz, kgmon on: bench {}",
        kprof_args.join(" ")
    );
    let disk = disk_image(&out_dir)?;
    let profiled = on_this_kernel(&kprof_opts, &bench, 1000, &kprof_args, &disk)?;
    let machine = machine(opts)?;
    let table = table(&ours, &linux);
    let profiled_table = profiled_table(&ours, &profiled);
    println!("\n{table}\n{profiled_table}");
    let described: String = machine
        .iter()
        .map(|(k, v)| format!("- {k}: {v}\n"))
        .collect();
    std::fs::write(
        out_dir.join("results.md"),
        format!("{described}\n{table}\n{profiled_table}"),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(
        out_dir.join("results.json"),
        json(&machine, &ours, &linux, &profiled),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(out_dir.join("profiling.svg"), chart(&ours, &linux, rates))
        .map_err(|e| e.to_string())?;
    println!(
        "bench: results in {}/results.{{md,json}}, chart in profiling.svg",
        out_dir.display()
    );
    let mut missing = missing(&ours, &linux, opts.cpus);
    for name in [
        "kernel_function_call_cycles",
        "kernel_function_call_kgmon_off_cycles",
        "kernel_profile_sample_of_one_tick_cycles",
    ] {
        if !profiled.contains_key(name) {
            missing.push(format!("{name} on the profiled kernel"));
        }
    }
    if missing.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("no result for {}", missing.join(", ")))
    }
}

/// The benchmark's arguments: the rate, and as many workload threads as
/// the machine has CPUs, so that profiling is measured with all of them
/// busy (and sampled).
fn bench_args(quick: bool, hz: u32, profile_only: bool, cpus: u32) -> Vec<String> {
    let mut args = vec!["--hz".to_string(), hz.to_string()];
    if cpus > 1 {
        args.push("--threads".into());
        args.push(cpus.to_string());
    }
    if quick {
        args.push("--quick".into());
    }
    if profile_only {
        args.push("--profile".into());
    } else {
        args.push("--disk".into());
    }
    args
}

/// Builds the benchmark with musl-gcc (installed if missing).
fn compile(out_dir: &Path) -> Result<PathBuf, String> {
    let cc = setup::ensure("musl-gcc", "musl-tools")?;
    let out = out_dir.join("bench");
    let source = build::root().join("tests/bench/bench.c");
    let mut cmd = Command::new(cc);
    cmd.args(["-static", "-O2", "-w", "-o"])
        .arg(&out)
        .arg(&source);
    build::run_checked(&mut cmd, "compiling tests/bench/bench.c")?;
    Ok(out)
}

/// Debian's kernel image: fetched once with apt-get download (the package
/// `linux-image-amd64` depends on) and unpacked with dpkg-deb.
pub(crate) fn linux_kernel(dir: &Path) -> Result<PathBuf, String> {
    let member = "./boot/vmlinuz-*";
    if let Some(found) = crate::setup::unpacked(dir, member) {
        return Ok(found);
    }
    crate::setup::debian_file(dir, &linux_package()?, member)
}

/// The package `linux-image-amd64` depends on: the kernel itself.
pub(crate) fn linux_package() -> Result<String, String> {
    let out = Command::new("apt-cache")
        .args(["depends", "linux-image-amd64"])
        .output()
        .map_err(|e| format!("apt-cache depends linux-image-amd64: {e}"))?;
    let depends = String::from_utf8_lossy(&out.stdout);
    let package = depends
        .lines()
        .find_map(|l| l.trim().strip_prefix("Depends: "))
        .filter(|p| p.starts_with("linux-image-"))
        .ok_or("apt-cache names no kernel package for linux-image-amd64")?;
    Ok(package.to_string())
}

/// An empty ext3 image for the disk rows, made fresh (512 MiB, 4 KiB
/// blocks): the same for both kernels.
fn disk_image(out_dir: &Path) -> Result<PathBuf, String> {
    let image = out_dir.join("disk.img");
    setup::make_ext3(&image, "512M", 4096, None, &[])?;
    Ok(image)
}

fn on_this_kernel(
    opts: &Options,
    bench: &Path,
    hz: u32,
    args: &[String],
    disk: &Path,
) -> Result<Results, String> {
    let mut boot_opts = opts.clone();
    boot_opts.disks = vec![disk.to_path_buf()];
    boot_opts.release = optimised(opts);
    boot_opts.hz = hz;
    boot_opts.add = vec![(bench.display().to_string(), "/bin/bench".into())];
    boot_opts.program = std::iter::once("/bin/bench".to_string())
        .chain(args.iter().cloned())
        .collect();
    let image = build::image(&boot_opts, &Boot::test(&boot_opts, "bench", ""))?;
    let outcome = qemu::boot(&boot_opts, &image, Duration::from_secs(1200), false, &[])?;
    parse(&outcome.lines, "this kernel")
}

fn on_linux(
    opts: &Options,
    kernel: &Path,
    bench: &Path,
    dir: &Path,
    args: &[String],
    disk: &Path,
) -> Result<Results, String> {
    let initrd = crate::linuxdisk::initramfs(&dir.join("linux"), bench, dir)?;
    let lines = boot_linux(
        opts,
        (kernel, &initrd),
        disk,
        &args.join(" "),
        Duration::from_secs(1200),
    )?;
    parse(&lines, "Linux")
}

/// Boots Debian's Linux (`kernel`, `initrd`) in the same QEMU machine
/// this kernel gets, with `disk` as its virtio disk and `init_args` for
/// its /init, until it powers off or `limit` passes; its console lines.
/// linuxdisk.rs boots Linux so too.
pub(crate) fn boot_linux(
    opts: &Options,
    (kernel, initrd): (&Path, &Path),
    disk: &Path,
    init_args: &str,
    limit: Duration,
) -> Result<Vec<String>, String> {
    let mut cmd = Command::new(setup::qemu()?);
    cmd.args([
        "-m",
        "512M",
        "-no-reboot",
        "-display",
        "none",
        "-serial",
        "stdio",
    ]);
    cmd.args(["-cpu", qemu::cpu_model(opts.accel)]);
    cmd.args(["-smp", &opts.cpus.to_string()]);
    cmd.args(["-accel", qemu::accel_name(opts.accel)]);
    qemu::disk_args(&mut cmd, 0, disk);
    cmd.arg("-kernel").arg(kernel).arg("-initrd").arg(initrd);
    cmd.arg("-append")
        .arg(format!("console=ttyS0 quiet panic=-1 -- {init_args}"));
    cmd.stdin(Stdio::null());
    let out = run_with_timeout(cmd, limit)?;
    Ok(out
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect())
}

/// Runs QEMU booting Linux until it exits (Linux powers off at the end of
/// /init) or `limit` passes; its console.
fn run_with_timeout(mut cmd: Command, limit: Duration) -> Result<String, String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start QEMU: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("Linux did not finish in {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(reader.join().unwrap_or_default())
}

/// The `bench: NAME VALUE UNIT` lines; it must end with `bench: done`.
fn parse(lines: &[String], system: &str) -> Result<Results, String> {
    let mut results = Results::new();
    let mut done = false;
    for line in lines {
        let Some(rest) = line.trim().strip_prefix("bench: ") else {
            continue;
        };
        if rest == "done" {
            done = true;
            continue;
        }
        let mut words = rest.split_whitespace();
        if let (Some(name), Some(value), Some(unit)) = (words.next(), words.next(), words.next())
            && let Ok(value) = value.parse::<f64>()
        {
            let number = |w: Option<&str>| w.and_then(|w| w.parse::<f64>().ok());
            let quartiles = number(words.next()).zip(number(words.next()));
            let unit = unit.to_string();
            results.insert(
                name.to_string(),
                Figure {
                    value,
                    unit,
                    quartiles,
                },
            );
        }
    }
    if !done {
        return Err(format!(
            "the benchmark on {system} did not finish (no 'bench: done')"
        ));
    }
    Ok(results)
}

/// Profiling results get the rate in their name; the rest are taken once.
fn merge(into: &mut Results, from: Results, hz: u32) {
    for (name, value) in from {
        if name.starts_with("profile_") {
            into.insert(format!("{name}@{hz}Hz"), value);
        } else {
            into.entry(name).or_insert(value);
        }
    }
}

/// A figure as the table shows it: the value, then the quartiles of its
/// rounds when it has them.
fn cell(figure: Option<&Figure>) -> String {
    match figure {
        None => "-".into(),
        Some(Figure {
            value,
            unit,
            quartiles: Some((q1, q3)),
        }) => format!("{value:.1} {unit} ({q1:.1}-{q3:.1})"),
        Some(Figure { value, unit, .. }) => format!("{value:.1} {unit}"),
    }
}

/// This kernel's time over Linux's, marked "within noise" when the two
/// sides' quartile ranges overlap: then the rounds cannot tell them apart.
fn ratio(ours: Option<&Figure>, linux: Option<&Figure>) -> String {
    let (Some(a), Some(b)) = (ours, linux) else {
        return "-".into();
    };
    let is_time = matches!(a.unit.as_str(), "ns" | "us" | "ms");
    let is_rate = a.unit == "MiB/s";
    if !(is_time || is_rate) || b.value <= 0.0 || a.value <= 0.0 || a.unit != b.unit {
        return "-".into();
    }
    let overlap = match (a.quartiles, b.quartiles) {
        (Some((a1, a3)), Some((b1, b3))) => a1 <= b3 && b1 <= a3,
        _ => false,
    };
    let noise = if overlap { " (within noise)" } else { "" };
    // A rate's time is its inverse: the ratio stays "our time over Linux's".
    let times = if is_rate {
        b.value / a.value
    } else {
        a.value / b.value
    };
    format!("{times:.2}x{noise}")
}

fn table(ours: &Results, linux: &Results) -> String {
    let mut out = String::from(
        "| benchmark | this kernel (quartiles) | Linux (quartiles) | ratio |\n|---|---|---|---|\n",
    );
    let names: std::collections::BTreeSet<&String> = ours.keys().chain(linux.keys()).collect();
    for name in names.into_iter().filter(|n| !n.contains("_unavailable")) {
        // The profiling workload is calibrated on each system to take the
        // same time, so only the micro-benchmarks compare across systems.
        let ratio = if name.starts_with("profile_") {
            "-".into()
        } else {
            ratio(ours.get(name), linux.get(name))
        };
        let cell = |r: &Results| cell(r.get(name));
        out.push_str(&format!(
            "| {name} | {} | {} | {ratio} |\n",
            cell(ours),
            cell(linux)
        ));
    }
    out
}

/// The profiled kernel (kgmon on) against the plain one, row by row, and
/// mcount's cost per call: a kernel function call's cycles in the
/// profiled kernel (recording; and with kgmon off, one look at a flag)
/// less the same call's in the plain kernel, which has no mcount.
fn profiled_table(plain: &Results, profiled: &Results) -> String {
    let mut out = String::from(
        "| the kernel profiling itself | plain kernel (quartiles) | profiled kernel, kgmon on (quartiles) | ratio |\n|---|---|---|---|\n",
    );
    for (name, figure) in profiled
        .iter()
        .filter(|(n, _)| !n.ends_with("_kgmon_off_cycles"))
    {
        out.push_str(&format!(
            "| {name} | {} | {} | {} |\n",
            cell(plain.get(name)),
            cell(Some(figure)),
            ratio(Some(figure), plain.get(name))
        ));
    }
    let call = |r: &Results, name: &str| r.get(name).map(|f| f.value);
    if let Some(bare) = call(plain, "kernel_function_call_cycles") {
        for (row, name) in [
            ("mcount_per_call_recording", "kernel_function_call_cycles"),
            (
                "mcount_per_call_kgmon_off",
                "kernel_function_call_kgmon_off_cycles",
            ),
        ] {
            if let Some(with) = call(profiled, name) {
                out.push_str(&format!("| {row} | - | {:.0} cycles | - |\n", with - bare));
            }
        }
    }
    out
}

/// Whether this kernel runs optimised: always for the figures (Linux is an
/// optimised build; the test profile, opt-level 1, made the null call 1.8x
/// slower), and for the `--quick` smoke run only if asked, so that the test
/// command needs no second kernel build.
fn optimised(opts: &Options) -> bool {
    opts.release || !opts.quick
}

/// What the figures were measured on, for the results files: TCG timings
/// move between hosts, so a figure means little without its machine.
fn machine(opts: &Options) -> Result<Vec<(&'static str, String)>, String> {
    let first_line = |mut cmd: Command| {
        cmd.output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|text| text.lines().next().map(str::to_string))
            .unwrap_or_else(|| "unknown".into())
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let mut qemu = Command::new(setup::qemu()?);
    qemu.arg("--version");
    let mut commit = Command::new("git");
    commit
        .args(["describe", "--always", "--dirty"])
        .current_dir(build::root());
    Ok(vec![
        ("host CPU", format!("{cpu} ({cores} cores)")),
        ("QEMU", first_line(qemu)),
        (
            "accelerator",
            format!(
                "{} (-cpu {})",
                qemu::accel_name(opts.accel),
                qemu::cpu_model(opts.accel)
            ),
        ),
        ("commit", first_line(commit)),
        (
            "this kernel's build",
            if optimised(opts) {
                "release (optimised)"
            } else {
                "dev (opt-level 1)"
            }
            .into(),
        ),
    ])
}

fn json(machine: &[(&str, String)], ours: &Results, linux: &Results, profiled: &Results) -> String {
    let about: Vec<String> = machine
        .iter()
        .map(|(k, v)| format!("    \"{k}\": \"{}\"", v.replace('"', "'")))
        .collect();
    let side = |r: &Results| {
        let fields: Vec<String> = r
            .iter()
            .map(|(k, f)| {
                let quartiles = f.quartiles.map_or(String::new(), |(q1, q3)| {
                    format!(", \"q1\": {q1}, \"q3\": {q3}")
                });
                format!(
                    "    \"{k}\": {{\"value\": {}, \"unit\": \"{}\"{quartiles}}}",
                    f.value, f.unit
                )
            })
            .collect();
        format!("{{\n{}\n  }}", fields.join(",\n"))
    };
    format!(
        "{{\n  \"machine\": {{\n{}\n  }},\n  \"this_kernel\": {},\n  \"linux\": {},\n  \"profiled_kernel_kgmon_on\": {}\n}}\n",
        about.join(",\n"),
        side(ours),
        side(linux),
        side(profiled)
    )
}

/// A line chart of the profiling slowdown against the rate (log scale).
fn chart(ours: &Results, linux: &Results, rates: &[u32]) -> String {
    let series = [
        ("this kernel, native profil", ours, "native", "#1b7837"),
        ("this kernel, SIGPROF emulation", ours, "sigprof", "#c51b7d"),
        ("Linux, SIGPROF emulation", linux, "sigprof", "#2166ac"),
    ];
    let value = |r: &Results, mode: &str, hz: u32| {
        r.get(&format!("profile_{mode}_slowdown@{hz}Hz"))
            .map(|f| f.value)
    };
    let max = series
        .iter()
        .flat_map(|(_, r, m, _)| rates.iter().filter_map(|&hz| value(r, m, hz)))
        .fold(1.0f64, f64::max);
    let (w, h, left, bottom) = (640.0, 400.0, 70.0, 340.0);
    let x = |hz: u32| left + ((hz as f64).log10() - 2.0) / 2.0 * 500.0;
    let y = |v: f64| bottom - v.max(0.0) / max * 300.0;
    let mut svg = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='12'>\n\
         <text x='{left}' y='20' font-size='14'>Profiling slowdown of the same workload (%), by sampling rate</text>\n\
         <line x1='{left}' y1='{bottom}' x2='{}' y2='{bottom}' stroke='black'/>\n\
         <line x1='{left}' y1='{bottom}' x2='{left}' y2='40' stroke='black'/>\n",
        left + 520.0
    );
    for &hz in &RATES {
        svg.push_str(&format!(
            "<text x='{}' y='{}' text-anchor='middle'>{hz} Hz</text>\n",
            x(hz),
            bottom + 18.0
        ));
    }
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        svg.push_str(&format!(
            "<text x='{}' y='{}' text-anchor='end'>{v:.1}%</text>\n",
            left - 6.0,
            y(v) + 4.0
        ));
    }
    for (k, (label, r, mode, color)) in series.iter().enumerate() {
        let points: Vec<String> = rates
            .iter()
            .filter_map(|&hz| value(r, mode, hz).map(|v| format!("{:.1},{:.1}", x(hz), y(v))))
            .collect();
        if !points.is_empty() {
            svg.push_str(&format!(
                "<polyline fill='none' stroke='{color}' stroke-width='2' points='{}'/>\n",
                points.join(" ")
            ));
            for p in &points {
                let (px, py) = p.split_once(',').unwrap_or(("0", "0"));
                svg.push_str(&format!(
                    "<circle cx='{px}' cy='{py}' r='3' fill='{color}'/>\n"
                ));
            }
        }
        svg.push_str(&format!(
            "<text x='{}' y='{}' fill='{color}'>{label}</text>\n",
            left + 10.0,
            60.0 + 16.0 * k as f64
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

/// Benchmarks that must have produced a number on each side.
fn missing(ours: &Results, linux: &Results, cpus: u32) -> Vec<String> {
    const BOTH: [&str; 28] = [
        "null_syscall_getppid",
        "null_syscall_with_500_processes_asleep",
        "unassigned_syscall_enosys",
        "read_0_bytes_from_a_pipe",
        "write_1_byte_to_dev_null",
        "clock_gettime_syscall",
        "clock_gettime_vdso",
        "pipe_write_then_read_1_byte",
        "pipe_64KiB_to_another_process",
        "ramfs_read_4KiB",
        "open_close",
        "stat",
        "fork_exit_wait",
        "fork_exec_wait",
        "fork_exit_wait_64MiB_touched",
        "pipe_ping_pong_round_trip",
        "sched_yield_switch_round_trip",
        "anon_memory_mmap_and_first_touch_per_page",
        "mmap_munmap_1MiB",
        "signal_to_self_round_trip",
        "thread_create_join",
        "futex_wake_uncontended",
        "futex_ping_pong_two_threads_round_trip",
        "mprotect_one_page",
        "disk_sequential_write_with_fsync",
        "disk_sequential_read_cold",
        "disk_create_and_delete_1KiB_file",
        "disk_4KiB_write_and_fsync",
    ];
    // Only a machine of several CPUs has a CPU beside the measured one.
    let several: &[&str] = if cpus > 1 {
        &["mprotect_one_page_beside_a_thread_on_another_cpu"]
    } else {
        &[]
    };
    let mut out = Vec::new();
    for &name in BOTH.iter().chain(several) {
        for (system, r) in [("this kernel", ours), ("Linux", linux)] {
            if !r.contains_key(name) {
                out.push(format!("{name} on {system}"));
            }
        }
    }
    for key in [
        "profile_native_slowdown@1000Hz",
        "profile_sigprof_slowdown@1000Hz",
    ] {
        if !ours.contains_key(key) {
            out.push(format!("{key} on this kernel"));
        }
    }
    if !linux.contains_key("profile_sigprof_slowdown@1000Hz") {
        out.push("profile_sigprof_slowdown@1000Hz on Linux".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn quartiles_are_read_when_the_line_has_them() {
        let r = parse(
            &lines("bench: a 10.0 ns 9.0 12.5\nbench: b 3.0 %\nnoise\nbench: done"),
            "x",
        )
        .unwrap();
        assert_eq!(r["a"].quartiles, Some((9.0, 12.5)));
        assert_eq!(r["b"].quartiles, None);
        assert!(
            parse(&lines("bench: a 1.0 ns"), "x").is_err(),
            "no done line"
        );
    }

    #[test]
    fn overlapping_quartiles_are_within_noise() {
        let f = |value, q1, q3| Figure {
            value,
            unit: "ns".into(),
            quartiles: Some((q1, q3)),
        };
        assert_eq!(
            ratio(Some(&f(10.0, 9.0, 11.0)), Some(&f(5.0, 4.0, 6.0))),
            "2.00x"
        );
        assert_eq!(
            ratio(Some(&f(10.0, 9.0, 11.0)), Some(&f(10.5, 10.8, 12.0))),
            "0.95x (within noise)"
        );
        let percent = Figure {
            value: 1.0,
            unit: "%".into(),
            quartiles: None,
        };
        assert_eq!(ratio(Some(&percent), Some(&percent)), "-");
        assert_eq!(ratio(None, Some(&f(1.0, 1.0, 1.0))), "-");
    }
}
