//! An error and its sources as one line, each said once: `a: b: c`. The top level alone often
//! says little (reqwest's "error sending request", tokio-postgres's "error connecting to
//! server"), and `{:#}`-style joining repeats a source whose text the error already includes
//! (an I/O error's "Permission denied", say).

/// `e`'s text, then each source's that the line does not already contain.
pub(crate) fn error_line(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        source = s.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{text}")]
    struct E {
        text: &'static str,
        #[source]
        source: Option<Box<E>>,
    }

    fn e(text: &'static str, source: Option<E>) -> E {
        E {
            text,
            source: source.map(Box::new),
        }
    }

    #[test]
    fn sources_are_joined_and_a_repeated_one_is_said_once() {
        let chain = e(
            "connecting",
            Some(e("tls", Some(e("bad certificate", None)))),
        );
        assert_eq!(error_line(&chain), "connecting: tls: bad certificate");
        let repeats = e(
            "open: Permission denied",
            Some(e("Permission denied", None)),
        );
        assert_eq!(error_line(&repeats), "open: Permission denied");
    }
}
