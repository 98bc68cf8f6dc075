//! The tokenizer of simhashdb's own schemes.

/// The tokens of `text`: maximal runs of alphanumeric characters (Unicode `Alphabetic` or
/// `Numeric`); every other character separates tokens. The caller lower-cases first.
pub fn tokens(text: &str) -> Tokens<'_> {
    Tokens { rest: text }
}

/// Iterator over the tokens of a text.
pub struct Tokens<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let start = self.run_length(false);
        let rest = &self.rest[start..];
        if rest.is_empty() {
            self.rest = rest;
            return None;
        }
        self.rest = rest;
        let end = self.run_length(true);
        let token = &rest[..end];
        self.rest = &rest[end..];
        Some(token)
    }
}

impl Tokens<'_> {
    /// The byte length of the leading run of characters that are (`inside`) or are not
    /// alphanumeric; ASCII bytes are classified without decoding.
    fn run_length(&self, inside: bool) -> usize {
        let bytes = self.rest.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let (alnum, len) = if bytes[i] < 0x80 {
                (bytes[i].is_ascii_alphanumeric(), 1)
            } else {
                let c = self.rest[i..].chars().next().expect("i is a char boundary");
                (c.is_alphanumeric(), c.len_utf8())
            };
            if alnum != inside {
                break;
            }
            i += len;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::tokens;

    #[test]
    fn tokens_are_runs_of_letters_and_digits() {
        let t: Vec<&str> = tokens("don't stop—café 42_x").collect();
        assert_eq!(t, ["don", "t", "stop", "café", "42", "x"]);
        let t: Vec<&str> = tokens("١٢ 𝔸b, ß.").collect();
        assert_eq!(t, ["١٢", "𝔸b", "ß"]);
    }
}
