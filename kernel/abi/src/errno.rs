//! Linux errno values. System calls return `-errno` in `rax`.

/// An error number, as Linux x86_64 defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Errno(pub i32);

macro_rules! errnos {
    ($($name:ident = $value:expr, $text:expr;)*) => {
        impl Errno {
            $(pub const $name: Errno = Errno($value);)*

            /// The symbolic name, e.g. "EFAULT".
            pub fn name(self) -> &'static str {
                match self.0 { $($value => stringify!($name),)* _ => "E?" }
            }

            /// The message `strerror` prints.
            pub fn message(self) -> &'static str {
                match self.0 { $($value => $text,)* _ => "Unknown error" }
            }
        }
    };
}

errnos! {
    EPERM = 1, "Operation not permitted";
    ENOENT = 2, "No such file or directory";
    ESRCH = 3, "No such process";
    EINTR = 4, "Interrupted system call";
    EIO = 5, "I/O error";
    ENXIO = 6, "No such device or address";
    E2BIG = 7, "Argument list too long";
    ENOEXEC = 8, "Exec format error";
    EBADF = 9, "Bad file descriptor";
    ECHILD = 10, "No child processes";
    EAGAIN = 11, "Resource temporarily unavailable";
    ENOMEM = 12, "Out of memory";
    EACCES = 13, "Permission denied";
    EFAULT = 14, "Bad address";
    ENOTBLK = 15, "Block device required";
    EBUSY = 16, "Resource busy";
    EEXIST = 17, "File exists";
    EXDEV = 18, "Cross-device link";
    ENODEV = 19, "No such device";
    ENOTDIR = 20, "Not a directory";
    EISDIR = 21, "Is a directory";
    EINVAL = 22, "Invalid argument";
    ENFILE = 23, "Too many open files in system";
    EMFILE = 24, "Too many open files";
    ENOTTY = 25, "Not a tty";
    ETXTBSY = 26, "Text file busy";
    EFBIG = 27, "File too large";
    ENOSPC = 28, "No space left on device";
    ESPIPE = 29, "Illegal seek";
    EROFS = 30, "Read-only file system";
    EMLINK = 31, "Too many links";
    EPIPE = 32, "Broken pipe";
    ERANGE = 34, "Result not representable";
    EDEADLK = 35, "Resource deadlock would occur";
    ENAMETOOLONG = 36, "Filename too long";
    ENOSYS = 38, "Function not implemented";
    ENOTEMPTY = 39, "Directory not empty";
    ELOOP = 40, "Symbolic link loop";
    ENOMSG = 42, "No message of desired type";
    EIDRM = 43, "Identifier removed";
    ENODATA = 61, "No data available";
    EOVERFLOW = 75, "Value too large for data type";
    ELIBBAD = 80, "Accessing a corrupted shared library";
    ENOTSOCK = 88, "Not a socket";
    EDESTADDRREQ = 89, "Destination address required";
    EMSGSIZE = 90, "Message too large";
    EPROTOTYPE = 91, "Protocol wrong type for socket";
    ENOPROTOOPT = 92, "Protocol not available";
    EPROTONOSUPPORT = 93, "Protocol not supported";
    ESOCKTNOSUPPORT = 94, "Socket type not supported";
    EOPNOTSUPP = 95, "Not supported";
    EAFNOSUPPORT = 97, "Address family not supported by protocol";
    EADDRINUSE = 98, "Address in use";
    EADDRNOTAVAIL = 99, "Address not available";
    ENETUNREACH = 101, "Network unreachable";
    ECONNRESET = 104, "Connection reset by peer";
    ENOBUFS = 105, "No buffer space available";
    EISCONN = 106, "Socket is connected";
    ENOTCONN = 107, "Socket not connected";
    ETIMEDOUT = 110, "Connection timed out";
    ECONNREFUSED = 111, "Connection refused";
    EALREADY = 114, "Operation already in progress";
    EINPROGRESS = 115, "Operation in progress";
    EUCLEAN = 117, "Structure needs cleaning";
    EOWNERDEAD = 130, "Owner died";
}

impl Errno {
    /// The value a system call returns in `rax` for this error.
    pub const fn as_return(self) -> isize {
        -(self.0 as isize)
    }

    /// Decodes a raw system call return: `Err` for -4095..=-1, as Linux does.
    pub fn from_return(ret: isize) -> Result<usize, Errno> {
        if (-4095..0).contains(&ret) {
            Err(Errno(-ret as i32))
        } else {
            Ok(ret as usize)
        }
    }
}
