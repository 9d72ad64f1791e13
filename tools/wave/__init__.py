"""waveform: values and changes of named signals around a time, in an approved VCD or FST record."""
