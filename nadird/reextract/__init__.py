"""`nadird reextract`: a job's current rules over the bodies already stored."""
