# The configuration tutorial's ProfileMode section, as its readers wrote it
import theano

profmode = theano.ProfileMode(optimizer="fast_run", linker=theano.gof.OpWiseCLinker())
x = theano.tensor.matrix("x")
f = theano.function([x], x * 2, mode=profmode)
profmode.print_summary()
