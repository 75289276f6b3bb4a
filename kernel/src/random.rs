//! Random bytes for `getrandom(2)`, `/dev/random`, `/dev/urandom` and the
//! 16 bytes exec hands every program (`AT_RANDOM`, which libc uses for its
//! stack canary and pointer guard).
//!
//! One ChaCha20 generator with fast key erasure (`kcore::random`) holds the
//! kernel's secret. It is seeded once, at boot, before any process runs, so
//! no reader ever has to wait:
//!
//! 1. from **RDSEED**, the CPU's entropy source, when CPUID reports it;
//! 2. else from **RDRAND**, the CPU's own generator;
//! 3. and always from the **jitter of the time-stamp counter**: how long the
//!    same small loop takes, sampled thousands of times. Under QEMU's TCG
//!    the TSC follows the host's clock, so the jitter is the host's
//!    scheduling and caches: real, but on an idle machine not much of it.
//!    On a CPU with neither instruction it is the only source, and the boot
//!    log says so.
//!
//! The boot log names the sources used (`random: seeded from ...`). Bytes
//! written to `/dev/random` or `/dev/urandom` are mixed in too (as on
//! Linux, without being trusted more than the boot seed).
//!
//! A request takes a fresh key for itself out of the generator, under the
//! lock, and expands it outside: a 64 KiB read keeps interrupts off only
//! for one ChaCha block.

use kcore::random::Generator;

use crate::arch::entropy;
use crate::sync::{IrqLock, Rank};

static GENERATOR: IrqLock<Generator> = IrqLock::new(Rank::Service, Generator::new());

/// Time-stamp-counter samples taken for the seed.
const JITTER_SAMPLES: usize = 4096;

/// Seeds the generator; before the first process.
pub fn init() {
    let mut sources = alloc::vec::Vec::new();
    let mut seed = [0u64; 8];
    let hardware = if entropy::has_rdseed() {
        Some(("RDSEED", entropy::rdseed as fn() -> Option<u64>))
    } else if entropy::has_rdrand() {
        Some(("RDRAND", entropy::rdrand as fn() -> Option<u64>))
    } else {
        None
    };
    if let Some((name, read)) = hardware {
        let got = seed
            .iter_mut()
            .filter_map(|w| read().map(|v| *w = v))
            .count();
        if got == seed.len() {
            sources.push(name);
        } else {
            crate::warn!("random: {name} gave {got} of {} words", seed.len());
        }
    }
    let mut material = alloc::vec::Vec::with_capacity(64 + 8 * JITTER_SAMPLES);
    material.extend(seed.iter().flat_map(|w| w.to_le_bytes()));
    material.extend(jitter().flat_map(|s| s.to_le_bytes()));
    sources.push("TSC jitter");
    GENERATOR.lock().mix(&material);
    crate::info!(
        "random: ChaCha20 generator seeded from {}",
        sources.join(" and ")
    );
}

/// Times a small loop `JITTER_SAMPLES` times: the durations, which differ
/// with what the caches, the pipeline and (under QEMU) the host did.
fn jitter() -> impl Iterator<Item = u64> {
    let mut scratch = [0u64; 64];
    (0..JITTER_SAMPLES).map(move |i| {
        let start = crate::arch::rdtsc();
        for j in 0..scratch.len() {
            scratch[(j * 7 + i) % 64] = scratch[j].wrapping_mul(31).wrapping_add(start);
        }
        let end = crate::arch::rdtsc();
        end.wrapping_sub(start) ^ core::hint::black_box(scratch[i % 64]).rotate_left(32)
    })
}

/// Fills `out` with random bytes.
pub fn fill(out: &mut [u8]) {
    let mut own = GENERATOR.lock().split();
    own.fill(out);
}

/// Mixes bytes a program wrote to `/dev/random` into the generator.
pub fn mix(material: &[u8]) {
    GENERATOR.lock().mix(material);
}
