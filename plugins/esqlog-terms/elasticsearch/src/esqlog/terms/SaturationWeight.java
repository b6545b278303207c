package esqlog.terms;

import java.io.IOException;
import java.util.List;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.similarities.Similarity.SimScorer;
import org.apache.lucene.util.BytesRef;

/**
 * Lucene 9's Weight and Scorer over SaturationLeaf (shared with the OpenSearch plugin, whose
 * Lucene 10 has the other Scorer and Weight API): the glue only, the work is in SaturationLeaf.
 */
final class SaturationWeight extends Weight {
    private final String field;
    private final List<BytesRef> terms;
    private final SimScorer sim;

    SaturationWeight(Query query, String field, List<BytesRef> terms, SimScorer sim) {
        super(query);
        this.field = field;
        this.terms = terms;
        this.sim = sim;
    }

    @Override
    public Scorer scorer(LeafReaderContext context) throws IOException {
        SaturationLeaf leaf = SaturationLeaf.read(context.reader(), field, terms, sim);
        if (leaf == null) {
            return null;
        }
        return new Scorer(this) {
            @Override
            public int docID() {
                return leaf.docID();
            }

            @Override
            public DocIdSetIterator iterator() {
                return leaf.iterator();
            }

            @Override
            public float getMaxScore(int upTo) {
                return leaf.maxScore();
            }

            @Override
            public float score() throws IOException {
                return leaf.score();
            }
        };
    }

    @Override
    public Explanation explain(LeafReaderContext context, int doc) throws IOException {
        SaturationLeaf leaf = SaturationLeaf.read(context.reader(), field, terms, sim);
        Explanation found = leaf == null ? null : leaf.explain(doc);
        return found != null ? found : Explanation.noMatch("no term of the group in the document");
    }

    @Override
    public boolean isCacheable(LeafReaderContext context) {
        return true;
    }
}
