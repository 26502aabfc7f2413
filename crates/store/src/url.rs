//! Database URLs made safe to print.

/// `url` with any password replaced by `***`, safe for logs and error messages:
/// the password of the user-info part and a `password=` query parameter.
pub fn mask_url(url: &str) -> String {
    let mut out = mask_userinfo(url);
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let masked: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => pair.to_string(),
            })
            .collect();
        out = format!("{head}{}", masked.join("&"));
    }
    out
}

fn mask_userinfo(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    // The user-info ends at the last '@' before any query or fragment; searching for the
    // last one keeps an unescaped '@' or '/' inside a password masked too.
    let before_query = rest.find(['?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..before_query].rfind('@') else {
        return url.to_string();
    };
    let userinfo = &rest[..at];
    match userinfo.find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..rest_start],
            &userinfo[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

/// The password in `url`, if any, so an error message that echoes it can be scrubbed.
pub(crate) fn password(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let before_query = rest.find(['?', '#']).unwrap_or(rest.len());
    let at = rest[..before_query].rfind('@')?;
    let (_, pw) = rest[..at].split_once(':')?;
    (!pw.is_empty()).then_some(pw)
}

/// A `Connect` error naming the masked URL, with the password scrubbed from the reason too.
pub(crate) fn connect_error(url: &str, reason: impl std::fmt::Display) -> crate::StoreError {
    let mut reason = reason.to_string();
    if let Some(pw) = password(url) {
        reason = reason.replace(pw, "***");
    }
    crate::StoreError::Connect {
        url: mask_url(url),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::mask_url;

    #[test]
    fn masks_passwords_and_nothing_else() {
        let cases = [
            (
                "postgres://user:secret@host/db",
                "postgres://user:***@host/db",
            ),
            (
                "postgres://user:secret@host:5432/db?sslmode=disable",
                "postgres://user:***@host:5432/db?sslmode=disable",
            ),
            ("postgres://user@host/db", "postgres://user@host/db"),
            ("postgres://host/db", "postgres://host/db"),
            ("postgres://:secret@host/db", "postgres://:***@host/db"),
            ("postgres://u:p@ss/w@host/db", "postgres://u:***@host/db"),
            (
                "postgres://u@host/db?user=x&password=secret",
                "postgres://u@host/db?user=x&password=***",
            ),
            ("sqlite://benchgate.db", "sqlite://benchgate.db"),
            ("sqlite:benchgate.db", "sqlite:benchgate.db"),
            ("not a url", "not a url"),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(mask_url(input), want, "mask_url({input:?})");
        }
    }

    #[test]
    fn finds_the_password_to_scrub() {
        assert_eq!(super::password("postgres://u:pw@h/d"), Some("pw"));
        assert_eq!(super::password("postgres://u@h/d"), None);
        assert_eq!(super::password("sqlite://x.db"), None);
    }
}
