//! The ZIP, uncompressed: one local header and the file's bytes per file,
//! then the central directory. No ZIP64, so at most 65,535 files and 4 GiB.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::failed;

/// Writes every file of `files` (relative to `dir`) into `zip`, inside a
/// folder named as `dir` is; returns the ZIP's size.
pub(super) fn write_zip(
    dir: &Path,
    files: &[(String, u64)],
    zip: &Path,
) -> Result<u64, String> {
    let too_big = || {
        format!(
            "{} would pass the simple ZIP format's limits (65,535 files, 4 \
             GiB); the folder is written, so zip it with another tool",
            zip.display()
        )
    };
    let count = u16::try_from(files.len()).map_err(|_| too_big())?;
    let top = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = File::create(zip).map_err(|err| failed(zip, &err))?;
    let mut out = Zip {
        out: BufWriter::new(file),
        written: 0,
        central: Vec::new(),
    };
    for (name, _) in files {
        let path = dir.join(name);
        let bytes = fs::read(&path).map_err(|err| failed(&path, &err))?;
        let modified = fs::metadata(&path)
            .and_then(|metadata| metadata.modified())
            .unwrap_or(UNIX_EPOCH);
        let stored = format!("{top}/{name}");
        out.add(&stored, &bytes, dos_time(modified))
            .map_err(|err| match err {
                ZipError::Io(err) => failed(zip, &err),
                ZipError::TooBig => too_big(),
            })?;
    }
    out.finish(count).map_err(|err| match err {
        ZipError::Io(err) => failed(zip, &err),
        ZipError::TooBig => too_big(),
    })
}

enum ZipError {
    Io(io::Error),
    TooBig,
}

impl From<io::Error> for ZipError {
    fn from(err: io::Error) -> Self {
        ZipError::Io(err)
    }
}

struct Zip {
    out: BufWriter<File>,
    written: u64,
    /// Each file's central directory record, written at the end.
    central: Vec<u8>,
}

impl Zip {
    /// Version 2.0 of the format, made on Unix, so that `unzip` gives
    /// each file the usual `rw-r--r--`.
    const VERSION: u16 = 20;
    const MADE_BY: u16 = 0x0314;
    /// Bit 11: names are UTF-8.
    const UTF8: u16 = 1 << 11;

    fn add(
        &mut self,
        name: &str,
        bytes: &[u8],
        (time, date): (u16, u16),
    ) -> Result<(), ZipError> {
        let offset = u32::try_from(self.written).map_err(|_| ZipError::TooBig)?;
        let size = u32::try_from(bytes.len()).map_err(|_| ZipError::TooBig)?;
        let name_len = u16::try_from(name.len()).map_err(|_| ZipError::TooBig)?;
        let crc = crc32(bytes);
        let mut local = Vec::with_capacity(30 + name.len());
        put32(&mut local, 0x0403_4b50);
        for field in [Self::VERSION, Self::UTF8, 0, time, date] {
            put16(&mut local, field);
        }
        for field in [crc, size, size] {
            put32(&mut local, field);
        }
        put16(&mut local, name_len);
        put16(&mut local, 0);
        local.extend_from_slice(name.as_bytes());
        self.out.write_all(&local)?;
        self.out.write_all(bytes)?;
        self.written += (local.len() + bytes.len()) as u64;

        let central = &mut self.central;
        put32(central, 0x0201_4b50);
        for field in [Self::MADE_BY, Self::VERSION, Self::UTF8, 0, time, date] {
            put16(central, field);
        }
        for field in [crc, size, size] {
            put32(central, field);
        }
        for field in [name_len, 0, 0, 0, 0] {
            put16(central, field);
        }
        put32(central, 0o100_644 << 16); // a regular file, rw-r--r--
        put32(central, offset);
        central.extend_from_slice(name.as_bytes());
        Ok(())
    }

    /// The central directory and its end record; the ZIP's size.
    fn finish(mut self, count: u16) -> Result<u64, ZipError> {
        let offset = u32::try_from(self.written).map_err(|_| ZipError::TooBig)?;
        let size =
            u32::try_from(self.central.len()).map_err(|_| ZipError::TooBig)?;
        let mut end = Vec::with_capacity(22);
        put32(&mut end, 0x0605_4b50);
        for field in [0, 0, count, count] {
            put16(&mut end, field);
        }
        put32(&mut end, size);
        put32(&mut end, offset);
        put16(&mut end, 0);
        self.out.write_all(&self.central)?;
        self.out.write_all(&end)?;
        self.out.flush()?;
        Ok(self.written + u64::from(size) + end.len() as u64)
    }
}

fn put16(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// The CRC-32 that ZIP uses (IEEE 802.3, reflected), a byte at a time.
fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0; 256];
        let (mut n, mut value) = (0, 0u32);
        while n < 256 {
            let mut c = value;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[n] = c;
            n += 1;
            value += 1;
        }
        table
    };
    !bytes.iter().fold(!0u32, |crc, &byte| {
        TABLE[usize::from(crc.to_le_bytes()[0] ^ byte)] ^ (crc >> 8)
    })
}

/// MS-DOS's `(time, date)` of a moment, in UTC (ZIP has no time zone),
/// clamped to the years it can say, 1980 to 2107.
fn dos_time(moment: SystemTime) -> (u16, u16) {
    let seconds = moment.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = plumbing::calendar::civil_from_days(seconds / 86_400);
    if year < 1980 {
        return (0, (1 << 5) | 1);
    }
    let year = year.min(2107);
    let of_day = seconds % 86_400;
    let (hour, minute, second) = (of_day / 3600, of_day / 60 % 60, of_day % 60);
    let time = (hour << 11) | (minute << 5) | (second / 2);
    let date = ((year - 1980) << 9) | (month << 5) | day;
    (
        u16::try_from(time).unwrap_or(0),
        u16::try_from(date).unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_the_usual_check_string() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn dos_time_of_a_known_moment() {
        // 2026-11-27 13:45:30 UTC
        let moment = UNIX_EPOCH + std::time::Duration::from_secs(1_795_787_130);
        assert_eq!(
            dos_time(moment),
            // hours, minutes, 2 s; years since 1980, month, day
            (13 * 2048 + 45 * 32 + 15, 46 * 512 + 11 * 32 + 27)
        );
        assert_eq!(dos_time(UNIX_EPOCH), (0, 32 + 1));
    }
}
