//! Whether a sed script only prints: a reader for GNU sed 4.9's script syntax, for the
//! subset of commands that print, select or rearrange lines of the input — addresses
//! (numbers, `$`, `first~step`, `/re/` and `\cREc` with `I`/`M`, `addr,+N`, `addr,~N`),
//! `!`, blocks, `p P = l q Q d D n N g G h H x z F`, `s` with the flags `g p i I m M` and
//! a number, and `y`.
//!
//! Everything else is outside the subset and makes the script not verified: the
//! commands that write (`w`, `W`, `s///w`), read other files (`r`, `R`), run a shell
//! (`e`, `s///e`), insert text or branch (`a i c : b t T v`), and anything this reader
//! does not follow to the letter. Regular expressions are scanned as GNU sed scans them
//! (its own tests, run here): the delimiter ends one unless escaped or inside a bracket
//! expression (`s/[/]/X/` replaces a slash); a backslash inside a bracket expression,
//! an unterminated one or a newline inside an expression is left unread.
//!
//! Knows nothing of sed's options or files: `readonly::verify` reads those.

/// Most bytes of script read; longer is not verified.
const MAX_SCRIPT: usize = 16 * 1024;

/// Whether `script` is made only of the printing subset (see the module doc).
pub fn print_only(script: &str) -> bool {
    if script.len() > MAX_SCRIPT {
        return false;
    }
    let chars: Vec<char> = script.chars().collect();
    Reader { s: &chars, i: 0 }.script().is_some()
}

struct Reader<'a> {
    s: &'a [char],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> bool {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i > start
    }

    /// The whole script: commands separated by `;` or newlines, blocks balanced.
    fn script(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            // Between commands: blanks, newlines and `;`.
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            let Some(c) = self.peek() else {
                return (depth == 0).then_some(());
            };
            if c == '#' {
                self.comment();
                continue;
            }
            if c == '}' {
                self.i += 1;
                depth = depth.checked_sub(1)?;
                self.end_of_command()?;
                continue;
            }
            self.address()?;
            self.blanks();
            while self.peek() == Some('!') {
                self.i += 1;
                self.blanks();
            }
            let cmd = self.next()?;
            match cmd {
                '{' => {
                    depth += 1;
                    continue;
                }
                'p' | 'P' | '=' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'z'
                | 'F' => {}
                'l' | 'q' | 'Q' => {
                    self.blanks();
                    self.number();
                }
                's' => self.substitute()?,
                'y' => {
                    let d = self.delimiter()?;
                    self.text(d)?;
                    self.text(d)?;
                }
                _ => return None,
            }
            self.end_of_command()?;
        }
    }

    fn comment(&mut self) {
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
        }
    }

    /// After a command: blanks, then the end, `;`, a newline, `}` or a comment.
    fn end_of_command(&mut self) -> Option<()> {
        self.blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}' | '#') => Some(()),
            _ => None,
        }
    }

    /// An optional address or address range.
    fn address(&mut self) -> Option<()> {
        if !self.one_address(true)? {
            return Some(());
        }
        self.blanks();
        if self.peek() == Some(',') {
            self.i += 1;
            self.blanks();
            match self.peek() {
                Some('+' | '~') => {
                    self.i += 1;
                    if !self.number() {
                        return None;
                    }
                }
                _ => {
                    if !self.one_address(false)? {
                        return None;
                    }
                }
            }
        }
        Some(())
    }

    /// One address; `Some(false)` when there is none here.
    fn one_address(&mut self, first: bool) -> Option<bool> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number();
                if first && self.peek() == Some('~') {
                    self.i += 1;
                    if !self.number() {
                        return None;
                    }
                }
                Some(true)
            }
            Some('$') => {
                self.i += 1;
                Some(true)
            }
            Some('/') => {
                self.i += 1;
                self.regex('/')?;
                self.regex_flags();
                Some(true)
            }
            Some('\\') => {
                self.i += 1;
                let d = self.delimiter()?;
                self.regex(d)?;
                self.regex_flags();
                Some(true)
            }
            _ => Some(false),
        }
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
    }

    /// The delimiter of `s`, `y` or `\cREc`: any character but a newline or a backslash.
    fn delimiter(&mut self) -> Option<char> {
        match self.next()? {
            '\n' | '\\' => None,
            d => Some(d),
        }
    }

    /// A regular expression up to the delimiter `d` (consumed): escapes skipped,
    /// bracket expressions read whole.
    fn regex(&mut self, d: char) -> Option<()> {
        loop {
            match self.next()? {
                '\n' => return None,
                // An escaped newline is not read either.
                '\\' if self.next()? == '\n' => return None,
                '\\' => {}
                '[' => self.bracket()?,
                c if c == d => return Some(()),
                _ => {}
            }
        }
    }

    /// A bracket expression after its `[`: `^` and a leading `]` are members, classes
    /// `[:x:]`, `[=x=]`, `[.x.]` are read whole, `]` ends it. A backslash or a newline
    /// inside is not read.
    fn bracket(&mut self) -> Option<()> {
        if self.peek() == Some('^') {
            self.i += 1;
        }
        if self.peek() == Some(']') {
            self.i += 1;
        }
        loop {
            match self.next()? {
                ']' => return Some(()),
                '\\' | '\n' => return None,
                '[' if matches!(self.peek(), Some(':' | '=' | '.')) => {
                    let kind = self.next()?;
                    loop {
                        match self.next()? {
                            '\n' | '\\' => return None,
                            c if c == kind && self.peek() == Some(']') => {
                                self.i += 1;
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Text up to the delimiter (consumed), escapes skipped: a replacement, `y`'s sets.
    fn text(&mut self, d: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next()?;
                }
                c if c == d => return Some(()),
                _ => {}
            }
        }
    }

    /// `s` after its name: delimiter, regex, replacement, flags.
    fn substitute(&mut self) -> Option<()> {
        let d = self.delimiter()?;
        self.regex(d)?;
        self.text(d)?;
        loop {
            match self.peek() {
                Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.i += 1,
                Some(c) if c.is_ascii_digit() => self.i += 1,
                _ => return Some(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::print_only;

    /// Each script run through GNU sed 4.9 here: the printing ones print, the others
    /// are the forms that write, read, run or branch.
    #[test]
    fn only_the_printing_subset_is_read() {
        for ok in [
            "1,20p",
            "10p",
            "$p",
            "/a/,/b/{p;=}",
            "s/a/X/gp",
            "2{p;q}",
            "1~2p;3,+1l",
            "0,/b/p",
            "p # comment",
            "/a/Ip",
            "\\,a,p",
            "s/[/]/X/p",
            "s/[]/]/X/p",
            "s/[[:punct:]/]/X/p",
            "s|a|b|2",
            "/^fn /,/^}/p",
            "y/abc/xyz/",
            "l 20",
            "q5",
            "$!N;P;D",
            "/x/!p",
            "1d;n;p",
            "",
        ] {
            assert!(print_only(ok), "{ok:?} only prints");
        }
        for bad in [
            "w out",
            "1w out",
            "s/a/b/w out",
            "s/a/b/e",
            "s/a/b/pe",
            "e id",
            "1e id",
            "r /etc/passwd",
            "R ~/.ssh/id_rsa",
            "W out",
            "a text",
            "i\\\ntext",
            "c x",
            ":a;N;ba",
            "b",
            "t",
            "v",
            "s/[/]/X/w out",
            "s/a/[/]/w out",
            "s/[\\/]/X/",
            "s/[a/x/",
            "{p",
            "p}",
            "s/a/b/x",
            "p x",
            "/a/ w out",
            "1,/x/ e id",
        ] {
            assert!(!print_only(bad), "{bad:?} does more than print");
        }
    }
}
