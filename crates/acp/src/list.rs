//! `session/list` (an editor's thread history) and the checks on a `cwd` the client sends.
//! The list is the stored sessions `podcode sessions` shows, less sub-agent sessions (a
//! `task` call's, reached from their parent's card) and `podcode tool call`'s, most
//! recently active first, each with the directory it runs in (where `session/load` opens
//! it), its title and its last activity. Pages are cut by a cursor naming the last session
//! sent, so sessions that become active between two pages do not shift the next page.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{ListSessionsRequest, ListSessionsResponse, SessionInfo};
use podcode_core::{Engine, SessionRow};

use crate::rpc::RpcError;
use crate::session::engine_error;

/// Sessions per page: Zed shows history a screenful at a time.
pub const PAGE_SIZE: usize = 50;

/// What a cursor this agent did not hand out is refused with.
pub const BAD_CURSOR: &str = "unknown cursor: pass the nextCursor of the previous session/list answer, or none for the first page";

/// ACP's `cwd` must be absolute (the protocol says so) and, where a session works in it, an
/// existing directory: said here, naming the path, rather than by whatever fails later.
pub fn check_cwd(cwd: &Path, must_exist: bool) -> Result<(), RpcError> {
    if !cwd.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "cwd must be an absolute path, got {}",
            cwd.display()
        )));
    }
    if !must_exist {
        return Ok(());
    }
    match std::fs::metadata(cwd) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(RpcError::invalid_params(format!(
            "cwd must be a directory, got the file {}",
            cwd.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(RpcError::invalid_params(
            format!("cwd {} does not exist", cwd.display()),
        )),
        Err(e) => Err(RpcError::invalid_params(format!(
            "cwd {} cannot be read: {e}",
            cwd.display()
        ))),
    }
}

/// One page of the sessions (of `req.cwd` when given) after `req.cursor`.
pub fn list(engine: &Engine, req: &ListSessionsRequest) -> Result<ListSessionsResponse, RpcError> {
    let wanted = match &req.cwd {
        Some(cwd) => {
            check_cwd(cwd, false)?;
            Some(canonical(cwd))
        }
        None => None,
    };
    let after = req.cursor.as_deref().map(parse_cursor).transpose()?;
    let mut rows: Vec<SessionRow> = engine
        .sessions(false)
        .map_err(engine_error)?
        .into_iter()
        .filter(|s| s.parent_id.is_none())
        .filter(|s| {
            wanted
                .as_ref()
                .is_none_or(|w| canonical(Path::new(&s.main_cwd)) == *w)
        })
        .collect();
    rows.sort_by(|a, b| order_key(b).cmp(&order_key(a)));
    let start = match &after {
        Some((at, id)) => rows.partition_point(|r| order_key(r) >= (*at, id.as_str())),
        None => 0,
    };
    let page: Vec<&SessionRow> = rows.iter().skip(start).take(PAGE_SIZE).collect();
    let next = (start + page.len() < rows.len())
        .then(|| page.last().map(|r| cursor(r)))
        .flatten();
    let sessions = page
        .into_iter()
        .map(|r| {
            SessionInfo::new(r.id.clone(), PathBuf::from(&r.main_cwd))
                .title((!r.title.is_empty()).then(|| r.title.clone()))
                .updated_at(iso_time(r.updated_at))
        })
        .collect();
    Ok(ListSessionsResponse::new(sessions).next_cursor(next))
}

/// Newest activity first; the id breaks ties so the order (and a cursor) is total.
fn order_key(r: &SessionRow) -> (i64, &str) {
    (r.updated_at, r.id.as_str())
}

fn cursor(r: &SessionRow) -> String {
    format!("{}:{}", r.updated_at, r.id)
}

fn parse_cursor(c: &str) -> Result<(i64, String), RpcError> {
    c.split_once(':')
        .and_then(|(at, id)| Some((at.parse().ok()?, id.to_string())))
        .filter(|(_, id)| !id.is_empty())
        .ok_or_else(|| RpcError::invalid_params(BAD_CURSOR))
}

/// Directories are compared as the filesystem resolves them (a symlinked checkout is the
/// same project); a directory that is gone compares as written.
fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// ISO 8601 (`2026-12-02T10:31:05.123Z`, UTC) for a millisecond timestamp, as the
/// protocol's `updatedAt` wants it.
pub fn iso_time(ms: i64) -> String {
    let ms = ms.max(0);
    let (secs, millis) = (ms / 1000, ms % 1000);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`), so no date crate is needed for one field.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_iso_8601_in_utc() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso_time(1_798_799_465_123), "2027-01-01T10:31:05.123Z");
    }

    #[test]
    fn a_cursor_not_handed_out_is_refused() {
        for bad in ["", "x", "12", "abc:ses_1", "12:"] {
            assert_eq!(parse_cursor(bad).unwrap_err().message, BAD_CURSOR, "{bad}");
        }
        assert_eq!(
            parse_cursor("12:ses_a:b").unwrap(),
            (12, "ses_a:b".to_string())
        );
        assert_eq!(
            BAD_CURSOR,
            "unknown cursor: pass the nextCursor of the previous session/list answer, or none for the first page"
        );
    }

    #[test]
    fn a_cwd_must_be_an_absolute_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        let gone = dir.path().join("gone");
        assert!(check_cwd(dir.path(), true).is_ok());
        let err = |p: &Path| check_cwd(p, true).unwrap_err().message;
        assert_eq!(
            err(&file),
            format!("cwd must be a directory, got the file {}", file.display())
        );
        assert_eq!(err(&gone), format!("cwd {} does not exist", gone.display()));
        assert_eq!(
            err(Path::new("rel/dir")),
            "cwd must be an absolute path, got rel/dir"
        );
        assert!(check_cwd(&gone, false).is_ok());
    }
}
