//! The profiling calls: profil(2) in its two forms, and this kernel's own
//! profstat and profcost. Arguments are decoded here; the mechanism (the
//! regions, the tick, the deferred update) is `profil.rs`.

use abi::Errno;
use abi::types::PROFIL_MULTI;

use super::SysResult;
use crate::mm::uaccess;
use crate::proc::TABLE;

/// profil(samples, size, offset, scale). `scale` is an `unsigned int` in
/// C, so only the low 32 bits of its register count; `size == (size_t)-1`
/// selects the AIX multi-region form, `samples` then being the array.
pub fn profil(samples: u64, size: u64, offset: u64, scale: u64) -> SysResult {
    if size as usize == PROFIL_MULTI {
        return crate::profil::start_regions(samples).map(|()| 0);
    }
    match scale as u32 {
        0 => {
            crate::profil::stop_by_call();
            Ok(0)
        }
        scale => crate::profil::start(samples, size, offset, scale).map(|()| 0),
    }
}

/// profstat(pid, buf): pid 0 is the caller.
pub fn profstat(pid: i32, buf: u64) -> SysResult {
    let stat = {
        let mut table = TABLE.lock();
        let p = match pid {
            0 => table.current_mut().ok_or(Errno::ESRCH)?,
            pid if pid > 0 => table
                .procs
                .get_mut(&(pid as u32))
                .map(|p| &mut **p)
                .ok_or(Errno::ESRCH)?,
            _ => return Err(Errno::EINVAL),
        };
        p.prof.stat()
    };
    uaccess::write(buf, &stat)?;
    Ok(0)
}

/// profcost(buf): what the profiling path costs, in TSC cycles.
pub fn profcost(buf: u64) -> SysResult {
    uaccess::write(buf, &crate::profil::costs())?;
    Ok(0)
}
