//! System V IPC: message queues, semaphore sets and shared memory segments,
//! their flags, commands, limits and the structures `msgctl`, `semctl` and
//! `shmctl` read and write, as Linux x86_64 has them (`linux/ipc.h`,
//! `linux/msg.h`, `linux/sem.h`, `linux/shm.h`, `asm-generic/*buf.h`).

/// `key_t` of an object that no other `*get` call can find by key.
pub const IPC_PRIVATE: i32 = 0;

/// `*get` flags, beside the nine permission bits.
pub const IPC_CREAT: u32 = 0o1000;
pub const IPC_EXCL: u32 = 0o2000;
/// msgsnd, msgrcv, semop: fail at once (EAGAIN, ENOMSG) instead of waiting.
pub const IPC_NOWAIT: u32 = 0o4000;

/// `*ctl` commands every kind has.
pub const IPC_RMID: i32 = 0;
pub const IPC_SET: i32 = 1;
pub const IPC_STAT: i32 = 2;
pub const IPC_INFO: i32 = 3;

/// msgctl commands (`ipcs`), msgrcv flags.
pub const MSG_STAT: i32 = 11;
pub const MSG_INFO: i32 = 12;
pub const MSG_STAT_ANY: i32 = 13;
pub const MSG_NOERROR: u32 = 0o10000;
pub const MSG_EXCEPT: u32 = 0o20000;
pub const MSG_COPY: u32 = 0o40000;

/// semop's per-operation flag: undo this operation when the process exits.
pub const SEM_UNDO: i16 = 0x1000;
/// semctl commands.
pub const GETPID: i32 = 11;
pub const GETVAL: i32 = 12;
pub const GETALL: i32 = 13;
pub const GETNCNT: i32 = 14;
pub const GETZCNT: i32 = 15;
pub const SETVAL: i32 = 16;
pub const SETALL: i32 = 17;
pub const SEM_STAT: i32 = 18;
pub const SEM_INFO: i32 = 19;
pub const SEM_STAT_ANY: i32 = 20;

/// shmat flags.
pub const SHM_RDONLY: u32 = 0o10000;
pub const SHM_RND: u32 = 0o20000;
pub const SHM_REMAP: u32 = 0o40000;
pub const SHM_EXEC: u32 = 0o100000;
/// shmget flags with no effect here (no huge pages, no swap to reserve).
pub const SHM_HUGETLB: u32 = 0o4000;
pub const SHM_NORESERVE: u32 = 0o10000;
/// shmctl commands.
pub const SHM_LOCK: i32 = 11;
pub const SHM_UNLOCK: i32 = 12;
pub const SHM_STAT: i32 = 13;
pub const SHM_INFO: i32 = 14;
pub const SHM_STAT_ANY: i32 = 15;
/// `shm_perm.mode` bits the kernel sets: removed while still attached;
/// locked in memory.
pub const SHM_DEST: u32 = 0o1000;
pub const SHM_LOCKED: u32 = 0o2000;
/// shmat's address must be a multiple of this (a page on x86).
pub const SHMLBA: u64 = 4096;

/// Linux's default limits (`/proc/sys/kernel/{msgmni,msgmax,msgmnb,sem,
/// shmmni,shmmax,shmall}` on a fresh boot).
pub const MSGMNI: usize = 32000;
pub const MSGMAX: usize = 8192;
pub const MSGMNB: usize = 16384;
pub const SEMMNI: usize = 32000;
pub const SEMMSL: usize = 32000;
pub const SEMMNS: usize = SEMMNI * SEMMSL;
pub const SEMOPM: usize = 500;
pub const SEMVMX: i32 = 32767;
/// The largest adjustment SEM_UNDO may build up on one semaphore.
pub const SEMAEM: i32 = SEMVMX;
pub const SHMMNI: usize = 4096;
pub const SHMMIN: u64 = 1;
pub const SHMMAX: u64 = u64::MAX - (1 << 24);
/// The most pages of shared memory, over all segments.
pub const SHMALL: u64 = u64::MAX - (1 << 24);

/// `struct ipc64_perm`: who owns an object, who made it, its nine
/// permission bits and its key.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IpcPerm {
    pub key: i32,
    pub uid: u32,
    pub gid: u32,
    pub cuid: u32,
    pub cgid: u32,
    pub mode: u32,
    pub seq: u16,
    pub pad2: u16,
    pub pad3: u32,
    pub unused1: u64,
    pub unused2: u64,
}
const _: () = assert!(size_of::<IpcPerm>() == 48);

/// `struct msqid64_ds`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MsqidDs {
    pub msg_perm: IpcPerm,
    pub msg_stime: i64,
    pub msg_rtime: i64,
    pub msg_ctime: i64,
    pub msg_cbytes: u64,
    pub msg_qnum: u64,
    pub msg_qbytes: u64,
    pub msg_lspid: i32,
    pub msg_lrpid: i32,
    pub unused4: u64,
    pub unused5: u64,
}
const _: () = assert!(size_of::<MsqidDs>() == 120);

/// `struct semid64_ds` (x86_64's own, `asm/sembuf.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SemidDs {
    pub sem_perm: IpcPerm,
    pub sem_otime: i64,
    pub unused1: u64,
    pub sem_ctime: i64,
    pub unused2: u64,
    pub sem_nsems: u64,
    pub unused3: u64,
    pub unused4: u64,
}
const _: () = assert!(size_of::<SemidDs>() == 104);

/// `struct shmid64_ds`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ShmidDs {
    pub shm_perm: IpcPerm,
    pub shm_segsz: u64,
    pub shm_atime: i64,
    pub shm_dtime: i64,
    pub shm_ctime: i64,
    pub shm_cpid: i32,
    pub shm_lpid: i32,
    pub shm_nattch: u64,
    pub unused4: u64,
    pub unused5: u64,
}
const _: () = assert!(size_of::<ShmidDs>() == 112);

/// `struct sembuf`: one operation of a semop call.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SemBuf {
    pub sem_num: u16,
    pub sem_op: i16,
    pub sem_flg: i16,
}
const _: () = assert!(size_of::<SemBuf>() == 6);

/// `struct msginfo` (msgctl IPC_INFO and MSG_INFO).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MsgInfo {
    pub msgpool: i32,
    pub msgmap: i32,
    pub msgmax: i32,
    pub msgmnb: i32,
    pub msgmni: i32,
    pub msgssz: i32,
    pub msgtql: i32,
    pub msgseg: u16,
    pub pad: u16,
}
const _: () = assert!(size_of::<MsgInfo>() == 32);

/// `struct seminfo` (semctl IPC_INFO and SEM_INFO).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SemInfo {
    pub semmap: i32,
    pub semmni: i32,
    pub semmns: i32,
    pub semmnu: i32,
    pub semmsl: i32,
    pub semopm: i32,
    pub semume: i32,
    pub semusz: i32,
    pub semvmx: i32,
    pub semaem: i32,
}
const _: () = assert!(size_of::<SemInfo>() == 40);

/// `struct shminfo64` (shmctl IPC_INFO).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ShmInfo64 {
    pub shmmax: u64,
    pub shmmin: u64,
    pub shmmni: u64,
    pub shmseg: u64,
    pub shmall: u64,
    pub unused: [u64; 4],
}
const _: () = assert!(size_of::<ShmInfo64>() == 72);

/// `struct shm_info` (shmctl SHM_INFO): what is in use.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ShmUsage {
    pub used_ids: i32,
    pub pad: u32,
    pub shm_tot: u64,
    pub shm_rss: u64,
    pub shm_swp: u64,
    pub swap_attempts: u64,
    pub swap_successes: u64,
}
const _: () = assert!(size_of::<ShmUsage>() == 48);
