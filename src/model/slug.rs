//! The slug that API v1 and v2 derive from a name (reference-behavior §2.2), like Django's
//! `slugify`: ASCII only, lowercase, runs of spaces and hyphens folded into one hyphen.

/// `"Hello World!"` → `"hello-world"`.
pub(crate) fn slugify(name: &str) -> String {
    let mut kept = String::with_capacity(name.len());
    for c in name.chars() {
        // Letters with accents lose them (NFKD would split them); other non-ASCII is dropped.
        let c = fold_accent(c);
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c.is_whitespace() {
            kept.push(c.to_ascii_lowercase());
        }
    }
    let mut out = String::with_capacity(kept.len());
    let mut pending_dash = false;
    for c in kept.trim().chars() {
        if c == '-' || c.is_whitespace() {
            pending_dash = true;
        } else {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(c);
        }
    }
    out.trim_matches(|c| c == '-' || c == '_').to_string()
}

fn fold_accent(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' => 'a',
        'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' | 'Ā' => 'A',
        'ç' | 'č' | 'ć' => 'c',
        'Ç' | 'Č' | 'Ć' => 'C',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' => 'e',
        'È' | 'É' | 'Ê' | 'Ë' | 'Ē' | 'Ė' | 'Ę' => 'E',
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'į' => 'i',
        'Ì' | 'Í' | 'Î' | 'Ï' | 'Ī' | 'Į' => 'I',
        'ñ' | 'ń' | 'ņ' => 'n',
        'Ñ' | 'Ń' | 'Ņ' => 'N',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ō' => 'o',
        'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ō' => 'O',
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ų' => 'u',
        'Ù' | 'Ú' | 'Û' | 'Ü' | 'Ū' | 'Ų' => 'U',
        'ý' | 'ÿ' => 'y',
        'Ý' => 'Y',
        'š' | 'ś' => 's',
        'Š' | 'Ś' => 'S',
        'ž' | 'ź' | 'ż' => 'z',
        'Ž' | 'Ź' | 'Ż' => 'Z',
        'ģ' => 'g',
        'ķ' => 'k',
        'ļ' => 'l',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::slugify;

    #[test]
    fn folds_like_django() {
        assert_eq!(slugify("Hello World!"), "hello-world");
        assert_eq!(slugify("  Foo  --  Bar  "), "foo-bar");
        assert_eq!(slugify("_leading_"), "leading");
        assert_eq!(slugify("Café Backup"), "cafe-backup");
        assert_eq!(slugify("日本"), "");
        assert_eq!(slugify("a_b"), "a_b");
    }
}
