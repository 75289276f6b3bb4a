//! kgmon(2): control of the kernel's own profile (kprof.rs), as kgmon(8)
//! controlled a 4.4BSD profiled kernel through sysctl: its state for
//! anyone; start, stop, reset, extract as gmon.out, the per-CPU sample
//! counts, the calls the call graph lost and the test workload for root
//! alone (CAP_SYS_ADMIN: where the
//! kernel spends its time tells a lot about what others do).

use abi::Errno;
use abi::types::{
    CAP_SYS_ADMIN, KGMON_CPU_SAMPLES, KGMON_EXTRACT, KGMON_IRQS_OFF, KGMON_LOST_ARCS, KGMON_RESET,
    KGMON_SPIN, KGMON_START, KGMON_STATE, KGMON_STOP,
};

use super::SysResult;
use crate::kprof;
use crate::mm::uaccess;

/// The longest test workload one call runs: a minute.
const MAX_SPIN_MS: u64 = 60_000;

/// What a call asks, its raw integers made into a request.
enum Op {
    State,
    Start,
    Stop,
    Reset,
    /// Into the buffer at `buf` of `len` bytes.
    Extract {
        buf: u64,
        len: u64,
    },
    /// Likewise.
    InterruptsOff {
        buf: u64,
        len: u64,
    },
    Spin {
        ms: u64,
    },
    CpuSamples {
        cpu: u64,
    },
    LostArcs,
}

impl Op {
    fn from_raw(op: u32, buf: u64, len: u64) -> Result<Op, Errno> {
        Ok(match op {
            KGMON_STATE => Op::State,
            KGMON_START => Op::Start,
            KGMON_STOP => Op::Stop,
            KGMON_RESET => Op::Reset,
            KGMON_EXTRACT => Op::Extract { buf, len },
            KGMON_SPIN if (1..=MAX_SPIN_MS).contains(&len) => Op::Spin { ms: len },
            KGMON_CPU_SAMPLES => Op::CpuSamples { cpu: len },
            KGMON_LOST_ARCS => Op::LostArcs,
            KGMON_IRQS_OFF => Op::InterruptsOff { buf, len },
            _ => return Err(Errno::EINVAL),
        })
    }
}

pub fn kgmon(op: u32, buf: u64, len: u64) -> SysResult {
    let op = Op::from_raw(op, buf, len)?;
    if !matches!(op, Op::State) && !crate::proc::cred().capable(CAP_SYS_ADMIN) {
        return Err(Errno::EPERM);
    }
    match op {
        Op::State => return Ok(kprof::state()),
        Op::Start => kprof::start()?,
        Op::Stop => kprof::stop(),
        Op::Reset => kprof::reset(),
        Op::Extract { buf, len } => return copy_out(&kprof::extract()?, buf, len),
        Op::InterruptsOff { buf, len } => {
            return copy_out(kprof::interrupts_off_text()?.as_bytes(), buf, len);
        }
        Op::Spin { ms } => kprof::spin(ms),
        Op::CpuSamples { cpu } => {
            let cpu = usize::try_from(cpu).map_err(|_| Errno::EINVAL)?;
            return Ok(kprof::cpu_samples(cpu)? as usize);
        }
        Op::LostArcs => return Ok(kprof::lost_arcs()? as usize),
    }
    Ok(0)
}

/// Hands `bytes` to the caller's buffer at `buf` of `len` bytes: with a
/// `len` of 0 only their length, ERANGE when they do not fit.
fn copy_out(bytes: &[u8], buf: u64, len: u64) -> SysResult {
    if len == 0 {
        return Ok(bytes.len());
    }
    if len < bytes.len() as u64 {
        return Err(Errno::ERANGE);
    }
    uaccess::copy_to_user(buf, bytes)?;
    Ok(bytes.len())
}
