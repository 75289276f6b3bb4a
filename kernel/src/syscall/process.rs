//! Process calls whose mechanism lives in `proc/`: argument checks only.

use abi::Errno;
use abi::types::Timespec;

use super::SysResult;
use crate::mm::uaccess;
use crate::proc::{current, lifecycle, sched};

pub fn exit(code: i32) -> SysResult {
    lifecycle::exit(abi::types::wait_status_exited(code as u8))
}

pub fn nanosleep(req: u64, rem: u64) -> SysResult {
    let want: Timespec = uaccess::read(req)?;
    if want.tv_sec < 0 || !(0..1_000_000_000).contains(&want.tv_nsec) {
        return Err(Errno::EINVAL);
    }
    let hz = u128::from(crate::clock::hz());
    let nanos = want.tv_sec as u128 * 1_000_000_000 + want.tv_nsec as u128;
    let ticks = (nanos * hz).div_ceil(1_000_000_000) as u64;
    let start = crate::clock::ticks();
    match sched::sleep_ticks(ticks) {
        Ok(()) => Ok(0),
        Err(e) => {
            if rem != 0 {
                let left = ticks.saturating_sub(crate::clock::ticks() - start) as u128
                    * 1_000_000_000
                    / hz;
                let left = Timespec {
                    tv_sec: (left / 1_000_000_000) as i64,
                    tv_nsec: (left % 1_000_000_000) as i64,
                };
                uaccess::write(rem, &left)?;
            }
            Err(e)
        }
    }
}

const ARCH_SET_FS: u32 = 0x1002;
const ARCH_GET_FS: u32 = 0x1003;

pub fn arch_prctl(code: u32, addr: u64) -> SysResult {
    match code {
        ARCH_SET_FS => {
            if addr >= crate::mm::USER_TOP {
                return Err(Errno::EPERM);
            }
            current(|p| p.fs_base = addr);
            x86_64::registers::model_specific::FsBase::write(x86_64::VirtAddr::new(addr));
            Ok(0)
        }
        ARCH_GET_FS => {
            uaccess::write(addr, &current(|p| p.fs_base))?;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}
