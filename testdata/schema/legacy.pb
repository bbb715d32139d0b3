
«
legacy.protorwtest"’
Legacy%
with_default (:42RwithDefault
name (	Rname'
kind (2.rwtest.Legacy.KindRkind
unpacked (Runpacked#
packed_ints (BR
packedInts
blob (Rblob$
grp (
2.rwtest.Legacy.GrpRgrp
Grp
g (Rg"
Kind
A
B