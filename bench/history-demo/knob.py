import re,sys
f=float(sys.argv[1]); p=sys.argv[2]
s=open(p).read()
for k in ['ITEMS_WAIT_US','ITEM_WAIT_US']:
    s=re.sub(r'(%s: )\d+'%k, lambda m: m.group(1)+str(round(5000*f)), s)
open(p,'w').write(s)
